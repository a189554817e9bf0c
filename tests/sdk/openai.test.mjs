// The official `openai` SDK (6.49.0, pinned) against `llmchaos serve`, unmodified but for baseURL.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import OpenAI from 'openai';

import { firstWords, rejection, serveForSuite } from './lib/mock.mjs';
import { openaiClient } from './lib/openai.mjs';

const TEXT = 'the quick brown fox jumps over the lazy dog';
const routes = {
  oa_plain: { dialect: 'openai', steps: [{ fault: 'ok', text: TEXT }] },
  oa_stream: { dialect: 'openai', steps: [{ fault: 'ok', text: TEXT }] },
  oa_helper: { dialect: 'openai', steps: [{ fault: 'ok', text: TEXT }] },
  oa_rate: { dialect: 'openai', steps: [{ fault: 'rate_429', retry_after_ms: 1 }, { fault: 'ok', text: TEXT }] },
  oa_quota: { dialect: 'openai', steps: [{ fault: 'quota_429', times: 3, retry_after_ms: 1 }] },
  oa_cut: { dialect: 'openai', steps: [{ fault: 'stream_cut', cut_after_events: 2, text: TEXT }] },
  oa_cut_helper: { dialect: 'openai', steps: [{ fault: 'stream_cut', cut_after_events: 2, text: TEXT }] },
  oa_noterm: { dialect: 'openai', steps: [{ fault: 'no_terminator', text: TEXT }] },
};
const messages = [{ role: 'user', content: 'say the canonical text' }];
const TEST_TIMEOUT = { timeout: 15_000 };

describe('openai SDK against llmchaos serve', () => {
  const suite = serveForSuite(routes);
  const client = (route, opts = {}) => openaiClient(suite, route, opts);


  test('a plain chat completion returns the scripted text, with the ledgered request id', TEST_TIMEOUT, async () => {
    const res = await client('oa_plain').chat.completions.create({ model: 'gpt-test', messages });
    assert.equal(res.choices[0].message.content, TEXT);
    assert.equal(res.choices[0].finish_reason, 'stop');
    const ledger = await suite.mock.settledLedger('oa_plain');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].stream, false);
    assert.equal(ledger[0].outcome, 'completed');
    assert.equal(ledger[0].x_stainless_retry_count, '0');
    assert.equal(res._request_id, ledger[0].request_id);
  });

  test('a streamed chat completion yields the scripted text through the raw iterator', TEST_TIMEOUT, async () => {
    const stream = await client('oa_stream').chat.completions.create({ model: 'gpt-test', messages, stream: true });
    let text = '';
    let finish = null;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    assert.equal(text, TEXT);
    assert.equal(finish, 'stop');
    const ledger = await suite.mock.settledLedger('oa_stream');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].stream, true);
    assert.equal(ledger[0].outcome, 'completed');
  });

  test('chat.completions.stream().finalChatCompletion() accumulates the scripted text', TEST_TIMEOUT, async () => {
    const final = await client('oa_helper').chat.completions.stream({ model: 'gpt-test', messages })
      .finalChatCompletion();
    assert.equal(final.choices[0].message.role, 'assistant');
    assert.equal(final.choices[0].message.content, TEXT);
    assert.equal(final.choices[0].finish_reason, 'stop');
  });

  test('rate_429 then ok: the SDK retries once and succeeds; retry counts 0 then 1', TEST_TIMEOUT, async () => {
    const res = await client('oa_rate').chat.completions.create({ model: 'gpt-test', messages });
    assert.equal(res.choices[0].message.content, TEXT);
    const ledger = await suite.mock.settledLedger('oa_rate');
    assert.deepEqual(ledger.map((e) => [e.fault, e.status, e.x_stainless_retry_count]),
                     [['rate_429', 429, '0'], ['ok', 200, '1']]);
  });

  test('quota_429: the SDK retries it like any 429, so the ledger shows its 3 attempts', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('oa_quota').chat.completions.create({ model: 'gpt-test', messages }));
    assert.ok(err instanceof OpenAI.RateLimitError, `expected RateLimitError, got ${err}`);
    assert.equal(err.status, 429);
    assert.equal(err.type, 'insufficient_quota');
    const ledger = await suite.mock.settledLedger('oa_quota');
    assert.deepEqual(ledger.map((e) => [e.fault, e.status, e.x_stainless_retry_count]),
                     [['quota_429', 429, '0'], ['quota_429', 429, '1'], ['quota_429', 429, '2']]);
  });

  // A TCP close in the middle of the chunked body is not a clean end of stream: undici fails the
  // body read with `TypeError: terminated` (cause: SocketError "other side closed"), and the SDK
  // iterator passes it on. It is not retried: the 200 had already arrived.
  test('stream_cut: the raw iterator throws "terminated" after the events sent, with no retry', TEST_TIMEOUT, async () => {
    let text = '';
    const err = await rejection(async () => {
      const stream = await client('oa_cut').chat.completions.create({ model: 'gpt-test', messages, stream: true });
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    });
    assert.match(err.message, /terminated/);
    const ledger = await suite.mock.settledLedger('oa_cut');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].outcome, 'cut');
    assert.equal(ledger[0].events_sent, 2);
    assert.equal(text.trim(), firstWords(TEXT, 2));  // exactly the content events sent before the cut
  });

  test('stream_cut: finalChatCompletion() rejects with an OpenAIError', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('oa_cut_helper').chat.completions.stream({ model: 'gpt-test', messages })
      .finalChatCompletion());
    assert.ok(err instanceof OpenAI.OpenAIError, `expected OpenAIError, got ${err}`);
    assert.match(err.message, /terminated/);
    const ledger = await suite.mock.settledLedger('oa_cut_helper');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].outcome, 'cut');
  });

  // provider-wire.md 1.3: a stream that ends cleanly at the HTTP level without `data: [DONE]` ends
  // the SDK iterator without an error. A client cannot tell it from a complete stream by the
  // sentinel alone; this pins that the SDK really behaves so.
  test('no_terminator: the iterator ends without an error and without [DONE]', TEST_TIMEOUT, async () => {
    const stream = await client('oa_noterm').chat.completions.create({ model: 'gpt-test', messages, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
    assert.equal(text, TEXT);
    const ledger = await suite.mock.settledLedger('oa_noterm');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].fault, 'no_terminator');
  });
});
