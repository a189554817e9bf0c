// The official `@anthropic-ai/sdk` (1.16.0, pinned) against `llmchaos serve`, unmodified but for baseURL.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import Anthropic from '@anthropic-ai/sdk';

import { firstWords, rejection, serveForSuite } from './lib/mock.mjs';

const TEXT = 'pack my box with five dozen liquor jugs';
const routes = {
  an_plain: { dialect: 'anthropic', steps: [{ fault: 'ok', text: TEXT }] },
  an_stream: { dialect: 'anthropic', steps: [{ fault: 'ok', text: TEXT }] },
  an_helper: { dialect: 'anthropic', steps: [{ fault: 'ok', text: TEXT }] },
  an_rate: { dialect: 'anthropic', steps: [{ fault: 'rate_429', retry_after_ms: 1 }, { fault: 'ok', text: TEXT }] },
  an_quota: { dialect: 'anthropic', steps: [{ fault: 'quota_429', times: 3, retry_after_ms: 1 }] },
  an_overloaded: {
    dialect: 'anthropic',
    steps: [{ fault: 'overloaded', times: 2, retry_after_ms: 1 }, { fault: 'ok', text: TEXT }],
  },
  an_overloaded_all: { dialect: 'anthropic', steps: [{ fault: 'overloaded', times: 3, retry_after_ms: 1 }] },
  an_cut: { dialect: 'anthropic', steps: [{ fault: 'stream_cut', cut_after_events: 2, text: TEXT }] },
  an_cut_helper: { dialect: 'anthropic', steps: [{ fault: 'stream_cut', cut_after_events: 2, text: TEXT }] },
};
const request = { model: 'claude-test', max_tokens: 64, messages: [{ role: 'user', content: 'say the canonical text' }] };
const TEST_TIMEOUT = { timeout: 15_000 };

const textOf = (message) => message.content.filter((b) => b.type === 'text').map((b) => b.text).join('');

describe('anthropic SDK against llmchaos serve', () => {
  const suite = serveForSuite(routes);
  const client = (route) => new Anthropic({ apiKey: 'sk-ant-test', baseURL: suite.mock.url(route), timeout: 10_000 });


  test('a plain message returns the scripted text, with the ledgered request id', TEST_TIMEOUT, async () => {
    const res = await client('an_plain').messages.create(request);
    assert.equal(textOf(res), TEXT);
    assert.equal(res.stop_reason, 'end_turn');
    const ledger = await suite.mock.settledLedger('an_plain');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].stream, false);
    assert.equal(ledger[0].outcome, 'completed');
    assert.equal(res._request_id, ledger[0].request_id);
  });

  test('a streamed message yields the scripted text as text_delta events', TEST_TIMEOUT, async () => {
    const stream = await client('an_stream').messages.create({ ...request, stream: true });
    let text = '';
    const types = [];
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
    }
    assert.equal(text, TEXT);
    assert.equal(types[0], 'message_start');
    assert.equal(types.at(-1), 'message_stop');
    const ledger = await suite.mock.settledLedger('an_stream');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].stream, true);
    assert.equal(ledger[0].outcome, 'completed');
  });

  test('messages.stream().finalMessage() accumulates the scripted text and the usage', TEST_TIMEOUT, async () => {
    const final = await client('an_helper').messages.stream(request).finalMessage();
    assert.equal(textOf(final), TEXT);
    assert.equal(final.stop_reason, 'end_turn');
    assert.equal(typeof final.usage.output_tokens, 'number');
  });

  test('rate_429 then ok: the SDK retries once and succeeds; retry counts 0 then 1', TEST_TIMEOUT, async () => {
    const res = await client('an_rate').messages.create(request);
    assert.equal(textOf(res), TEXT);
    const ledger = await suite.mock.settledLedger('an_rate');
    assert.deepEqual(ledger.map((e) => [e.fault, e.status, e.x_stainless_retry_count]),
                     [['rate_429', 429, '0'], ['ok', 200, '1']]);
  });

  test('quota_429: the SDK retries it like any 429, so the ledger shows its 3 attempts', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('an_quota').messages.create(request));
    assert.ok(err instanceof Anthropic.RateLimitError, `expected RateLimitError, got ${err}`);
    assert.equal(err.status, 429);
    const ledger = await suite.mock.settledLedger('an_quota');
    assert.deepEqual(ledger.map((e) => [e.fault, e.status, e.x_stainless_retry_count]),
                     [['quota_429', 429, '0'], ['quota_429', 429, '1'], ['quota_429', 429, '2']]);
  });

  test('overloaded (529) twice then ok: the SDK retries both and succeeds', TEST_TIMEOUT, async () => {
    const res = await client('an_overloaded').messages.create(request);
    assert.equal(textOf(res), TEXT);
    const ledger = await suite.mock.settledLedger('an_overloaded');
    assert.deepEqual(ledger.map((e) => [e.fault, e.status, e.x_stainless_retry_count]),
                     [['overloaded', 529, '0'], ['overloaded', 529, '1'], ['ok', 200, '2']]);
  });

  test('overloaded (529) on every attempt: OverloadedError after the SDK\'s 3 attempts', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('an_overloaded_all').messages.create(request));
    assert.ok(err instanceof Anthropic.OverloadedError, `expected OverloadedError, got ${err}`);
    assert.equal(err.status, 529);
    assert.equal(err.error?.error?.type, 'overloaded_error');
    const ledger = await suite.mock.settledLedger('an_overloaded_all');
    assert.deepEqual(ledger.map((e) => e.x_stainless_retry_count), ['0', '1', '2']);
  });

  // A TCP close in the middle of the chunked body: undici fails the body read with
  // `TypeError: terminated`; the SDK passes it on and does not retry (the 200 had arrived).
  test('stream_cut: the raw iterator throws "terminated" after the events sent, with no retry', TEST_TIMEOUT, async () => {
    let text = '';
    const err = await rejection(async () => {
      const stream = await client('an_cut').messages.create({ ...request, stream: true });
      for await (const event of stream) {
        if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
      }
    });
    assert.match(err.message, /terminated/);
    assert.equal(text.trim(), firstWords(TEXT, 2));
    const ledger = await suite.mock.settledLedger('an_cut');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].outcome, 'cut');
    assert.equal(ledger[0].events_sent, 2);
  });

  test('stream_cut: finalMessage() rejects with an AnthropicError', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('an_cut_helper').messages.stream(request).finalMessage());
    assert.ok(err instanceof Anthropic.AnthropicError, `expected AnthropicError, got ${err}`);
    assert.match(err.message, /terminated/);
    const ledger = await suite.mock.settledLedger('an_cut_helper');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].outcome, 'cut');
  });
});
