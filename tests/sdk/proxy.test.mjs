// The official SDKs (openai, @anthropic-ai/sdk, @google/genai) through `llmchaos proxy` in front of
// `llmchaos serve`: a stream the proxy cuts after 3 real content events must reach each SDK exactly as
// serve's own stream_cut does (openai/anthropic/gemini.test.mjs: the iterator throws "terminated" after
// the events sent, no retry), and no ledger or log names the client's key. The same cut on a recorded answer
// (`proxy --record`, then `serve --cassettes`) reaches the SDK in the same way, and the cassette holds no key.
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';

import { firstWords, MockServer, rejection, scriptToml } from './lib/mock.mjs';

const TEXT = 'the quick brown fox jumps over the lazy dog';
const KEY = 'sk-llmchaos-sdk-proxy-4b1d';
const PROMPT = 'say the canonical text';
const CUT_AFTER = 3;
const TEST_TIMEOUT = { timeout: 15_000 };

// Each SDK: its dialect, and one streamed call on a base URL that collects the visible text.
const sdks = {
  openai: {
    dialect: 'openai',
    async stream(base, onText) {
      const client = new OpenAI({ apiKey: KEY, baseURL: `${base}/v1`, timeout: 10_000 });
      const stream = await client.chat.completions.create({ model: 'gpt-test', messages: [{ role: 'user', content: PROMPT }], stream: true });
      for await (const chunk of stream) onText(chunk.choices[0]?.delta?.content ?? '');
    },
  },
  anthropic: {
    dialect: 'anthropic',
    async stream(base, onText) {
      const client = new Anthropic({ apiKey: KEY, baseURL: base, timeout: 10_000 });
      const stream = await client.messages.create({
        model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: PROMPT }], stream: true,
      });
      for await (const event of stream)
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') onText(event.delta.text);
    },
  },
  gemini: {
    dialect: 'gemini',
    async stream(base, onText) {
      const client = new GoogleGenAI({ apiKey: KEY, httpOptions: { baseUrl: base, timeout: 10_000 } });
      const stream = await client.models.generateContentStream({ model: 'gemini-test', contents: PROMPT });
      for await (const chunk of stream) onText(chunk.text ?? '');
    },
  },
};

for (const [name, sdk] of Object.entries(sdks)) {
  describe(`${name} SDK through llmchaos proxy in front of llmchaos serve`, () => {
    let upstream, proxy, serve, recorder, replay;
    const cut = { fault: 'stream_cut', cut_after_events: CUT_AFTER };
    const cassettes = mkdtempSync(join(tmpdir(), 'llmchaos-sdk-cassettes-'));

    before(async () => {
      upstream = await MockServer.start(scriptToml({ healthy: { dialect: sdk.dialect, steps: [{ fault: 'ok', text: TEXT, times: 10 }], then: 'ok' } }));
      proxy = await MockServer.start(scriptToml({ cut: { dialect: sdk.dialect, steps: [cut] } }),
                                     ['proxy', '--upstream', upstream.url('healthy')]);
      serve = await MockServer.start(scriptToml({ cut: { dialect: sdk.dialect, steps: [{ ...cut, text: TEXT, times: 2 }] } }));
      recorder = await MockServer.start(scriptToml({ cut: { dialect: sdk.dialect, steps: [] } }),
                                        ['proxy', '--upstream', upstream.url('healthy'), '--record', cassettes]);
    });
    after(async () => {
      for (const s of [proxy, upstream, serve, recorder, replay]) if (s) assert.equal(await s.stop(), 0, `exit code after SIGTERM; stderr: ${s.stderr}`);
      rmSync(cassettes, { recursive: true, force: true });
    });

    const cutThrough = async (server) => {
      let text = '';
      const err = await rejection(() => sdk.stream(server.url('cut'), (t) => { text += t; }));
      return { err, text };
    };

    test(`stream_cut through the proxy: the SDK throws "terminated" after ${CUT_AFTER} real events, as from serve, no retry`,
         TEST_TIMEOUT, async () => {
      const direct = await cutThrough(serve);
      const via = await cutThrough(proxy);
      assert.match(direct.err.message, /terminated/);
      assert.equal(via.err.constructor, direct.err.constructor);
      assert.equal(via.err.message, direct.err.message);
      assert.equal(via.text, direct.text);
      assert.equal(via.text.trim(), firstWords(TEXT, CUT_AFTER));

      const ledger = await proxy.settledLedger('cut');
      assert.equal(ledger.length, 1);  // not retried
      assert.equal(ledger[0].outcome, 'cut');
      assert.equal(ledger[0].events_sent, CUT_AFTER);
      assert.equal(ledger[0].forwarded, true);
      assert.equal(ledger[0].upstream_status, 200);
      assert.equal((await serve.settledLedger('cut')).length, 1);  // the recorded-answer test makes the second
      assert.equal((await upstream.settledLedger('healthy')).length, 1);
      for (const s of [proxy, upstream]) {
        assert.ok(!JSON.stringify(await s.ledger()).includes(KEY), 'the key is in a ledger');
        assert.ok(!s.stderr.includes(KEY), 'the key is in stderr');
      }
    });

    test(`stream_cut on a recorded answer (serve --cassettes): the SDK throws as from serve after ${CUT_AFTER} recorded events`,
         TEST_TIMEOUT, async () => {
      let whole = '';
      await sdk.stream(recorder.url('cut'), (t) => { whole += t; });  // recorded through the proxy
      assert.equal(whole, TEXT);
      await recorder.settledLedger('cut');
      const files = readdirSync(cassettes).filter((f) => f.endsWith('.cassette.json'));
      assert.equal(files.length, 1);
      assert.ok(!readFileSync(join(cassettes, files[0]), 'utf8').includes(KEY), 'the key is in the cassette');
      replay = await MockServer.start(scriptToml({ cut: { dialect: sdk.dialect, steps: [cut] } }), ['serve', '--cassettes', cassettes]);
      const direct = await cutThrough(serve);
      const replayed = await cutThrough(replay);
      assert.equal(replayed.err.constructor, direct.err.constructor);
      assert.equal(replayed.err.message, direct.err.message);
      assert.equal(replayed.text, direct.text);
      assert.equal(replayed.text.trim(), firstWords(TEXT, CUT_AFTER));
      const ledger = await replay.settledLedger('cut');
      assert.equal(ledger.length, 1);
      assert.equal(ledger[0].outcome, 'cut');
      assert.equal(ledger[0].events_sent, CUT_AFTER);
    });
  });
}

// The Responses API's background resume (SPEC 3 rule 0) through the proxy: the create is cut by the proxy
// after 3 real deltas, then `responses.retrieve(id, { stream: true, starting_after: N })` is forwarded to
// the upstream, which re-serves its stored stream from N+1; the proxy ledgers it as the create's resume.
describe('openai SDK background resume through llmchaos proxy in front of llmchaos serve', () => {
  let upstream, proxy;
  before(async () => {
    upstream = await MockServer.start(scriptToml({ healthy: { dialect: 'responses', steps: [{ fault: 'ok', text: TEXT, times: 10 }], then: 'ok' } }));
    proxy = await MockServer.start(scriptToml({ bg: { dialect: 'responses', steps: [{ fault: 'stream_cut', cut_after_events: CUT_AFTER }], then: 'ok' } }),
                                   ['proxy', '--upstream', upstream.url('healthy')]);
  });
  after(async () => {
    for (const s of [proxy, upstream]) if (s) assert.equal(await s.stop(), 0, `exit code after SIGTERM; stderr: ${s.stderr}`);
  });

  test('a background stream cut by the proxy: responses.retrieve with stream and starting_after resumes through it to response.completed',
       TEST_TIMEOUT, async () => {
    const client = new OpenAI({ apiKey: KEY, baseURL: `${proxy.url('bg')}/v1`, timeout: 10_000, maxRetries: 0 });
    const cut = { id: '', last: -1, text: '' };
    const err = await rejection(async () => {
      const stream = await client.responses.create({ model: 'gpt-test', input: PROMPT, stream: true, background: true });
      for await (const ev of stream) {
        if (ev.type === 'response.created') cut.id = ev.response.id;
        if (ev.type === 'response.output_text.delta') cut.text += ev.delta;
        cut.last = ev.sequence_number;
      }
    });
    assert.match(err.message, /terminated/);
    assert.equal(cut.text.trim(), firstWords(TEXT, CUT_AFTER));
    const events = [];
    for await (const ev of await client.responses.retrieve(cut.id, { stream: true, starting_after: cut.last })) events.push(ev);
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => cut.last + 1 + i));
    const rest = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    assert.equal(cut.text + rest, TEXT);  // each token once
    assert.equal(events.at(-1).type, 'response.completed');
    const stored = await client.responses.retrieve(cut.id);
    assert.equal(stored.output_text, TEXT);

    const ledger = await proxy.settledLedger('bg');
    assert.equal(ledger.length, 3);
    assert.equal(ledger[0].background, true);
    assert.equal(ledger[0].outcome, 'cut');
    assert.equal(ledger[1].resume_of, ledger[0].seq);
    assert.equal(ledger[1].starting_after, cut.last);
    assert.equal(ledger[1].forwarded, true);
    assert.equal(ledger[1].outcome, 'completed');
    assert.equal(ledger[2].resume_of, ledger[0].seq);
    assert.equal(ledger[2].forwarded, true);
    const up = await upstream.settledLedger('healthy');
    assert.equal(up.length, 3);  // the create, the resume, the plain retrieve: each forwarded once
    assert.equal(up[1].resume_of, up[0].seq);
    assert.ok(!JSON.stringify(await proxy.ledger()).includes(KEY), 'the key is in the ledger');
  });
});
