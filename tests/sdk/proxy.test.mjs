// The official `openai` SDK through `llmchaos proxy` in front of `llmchaos serve`: a stream the proxy
// cuts after 2 real content events must reach the SDK exactly as serve's own stream_cut does
// (openai.test.mjs: the iterator throws "terminated" after the events sent, no retry).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import OpenAI from 'openai';

import { firstWords, MockServer, rejection, scriptToml } from './lib/mock.mjs';

const TEXT = 'the quick brown fox jumps over the lazy dog';
const KEY = 'sk-llmchaos-sdk-proxy-4b1d';
const messages = [{ role: 'user', content: 'say the canonical text' }];
const TEST_TIMEOUT = { timeout: 15_000 };

describe('openai SDK through llmchaos proxy in front of llmchaos serve', () => {
  let upstream, proxy, serve;
  const client = (server, route) =>
    new OpenAI({ apiKey: KEY, baseURL: `${server.url(route)}/v1`, timeout: 10_000 });

  before(async () => {
    upstream = await MockServer.start(scriptToml({ healthy: { dialect: 'openai', steps: [{ fault: 'ok', text: TEXT }], then: 'ok' } }));
    proxy = await MockServer.start(
      scriptToml({ oa_cut: { dialect: 'openai', steps: [{ fault: 'stream_cut', cut_after_events: 2 }] } }),
      ['proxy', '--upstream', upstream.url('healthy')]);
    serve = await MockServer.start(
      scriptToml({ oa_cut: { dialect: 'openai', steps: [{ fault: 'stream_cut', cut_after_events: 2, text: TEXT }] } }));
  });
  after(async () => {
    for (const s of [proxy, upstream, serve]) if (s) assert.equal(await s.stop(), 0, `exit code after SIGTERM; stderr: ${s.stderr}`);
  });

  const cutThrough = async (server) => {
    let text = '';
    const err = await rejection(async () => {
      const stream = await client(server, 'oa_cut').chat.completions.create({ model: 'gpt-test', messages, stream: true });
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    });
    return { err, text };
  };

  test('stream_cut through the proxy: the iterator throws "terminated" after 2 real events, as from serve, no retry', TEST_TIMEOUT, async () => {
    const direct = await cutThrough(serve);
    const via = await cutThrough(proxy);
    assert.match(direct.err.message, /terminated/);
    assert.equal(via.err.constructor, direct.err.constructor);
    assert.equal(via.err.message, direct.err.message);
    assert.equal(via.text, direct.text);
    assert.equal(via.text.trim(), firstWords(TEXT, 2));

    const ledger = await proxy.settledLedger('oa_cut');
    assert.equal(ledger.length, 1);  // not retried
    assert.equal(ledger[0].outcome, 'cut');
    assert.equal(ledger[0].events_sent, 2);
    assert.equal(ledger[0].forwarded, true);
    assert.equal(ledger[0].upstream_status, 200);
    assert.equal((await upstream.settledLedger('healthy')).length, 1);
    for (const s of [proxy, upstream]) {
      assert.ok(!JSON.stringify(await s.ledger()).includes(KEY), 'the key is in a ledger');
      assert.ok(!s.stderr.includes(KEY), 'the key is in stderr');
    }
  });
});
