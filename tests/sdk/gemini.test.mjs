// The official `@google/genai` SDK (2.32.0, pinned) against `llmchaos serve`, unmodified but for
// httpOptions.baseUrl. genai sends no retry-count header and does not retry unless asked to
// (httpOptions.retryOptions), so its attempts are told apart by the ledger's order alone.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { ApiError, GoogleGenAI } from '@google/genai';

import { firstWords, rejection, serveForSuite } from './lib/mock.mjs';

const TEXT = 'sphinx of black quartz judge my vow';
const routes = {
  ge_plain: { dialect: 'gemini', steps: [{ fault: 'ok', text: TEXT }] },
  ge_stream: { dialect: 'gemini', steps: [{ fault: 'ok', text: TEXT }] },
  ge_rate: { dialect: 'gemini', steps: [{ fault: 'rate_429', retry_after_ms: 1 }, { fault: 'ok', text: TEXT }] },
  ge_rate_retry: { dialect: 'gemini', steps: [{ fault: 'rate_429', retry_after_ms: 1 }, { fault: 'ok', text: TEXT }] },
  ge_overloaded_retry: {
    dialect: 'gemini',
    steps: [{ fault: 'overloaded', times: 2, retry_after_ms: 1 }, { fault: 'ok', text: TEXT }],
  },
  ge_cut: { dialect: 'gemini', steps: [{ fault: 'stream_cut', cut_after_events: 2, text: TEXT }] },
};
const MODEL = 'gemini-test';
const contents = 'say the canonical text';
// genai's opt-in retry, with delays small enough for a test (seconds).
const fastRetry = { attempts: 5, initialDelay: 0.001, maxDelay: 0.005 };
const TEST_TIMEOUT = { timeout: 15_000 };

describe('genai SDK against llmchaos serve', () => {
  const suite = serveForSuite(routes);
  const client = (route, httpOptions = {}) =>
    new GoogleGenAI({ apiKey: 'gemini-test-key', httpOptions: { baseUrl: suite.mock.url(route), timeout: 10_000, ...httpOptions } });


  test('generateContent returns the scripted text', TEST_TIMEOUT, async () => {
    const res = await client('ge_plain').models.generateContent({ model: MODEL, contents });
    assert.equal(res.text, TEXT);
    assert.equal(res.candidates[0].finishReason, 'STOP');
    const ledger = await suite.mock.settledLedger('ge_plain');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].stream, false);
    assert.equal(ledger[0].outcome, 'completed');
    assert.equal(ledger[0].model, MODEL);
  });

  test('generateContentStream yields the scripted text over alt=sse', TEST_TIMEOUT, async () => {
    const stream = await client('ge_stream').models.generateContentStream({ model: MODEL, contents });
    let text = '';
    let chunks = 0;
    for await (const chunk of stream) {
      text += chunk.text ?? '';
      ++chunks;
    }
    assert.equal(text, TEXT);
    assert.ok(chunks > 1, `expected one chunk per word, got ${chunks}`);
    const ledger = await suite.mock.settledLedger('ge_stream');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].stream, true);
    assert.match(ledger[0].path, /:streamGenerateContent/);
    assert.equal(ledger[0].outcome, 'completed');
  });

  test('rate_429 without retryOptions: ApiError 429 RESOURCE_EXHAUSTED after one attempt', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('ge_rate').models.generateContent({ model: MODEL, contents }));
    assert.ok(err instanceof ApiError, `expected ApiError, got ${err}`);
    assert.equal(err.status, 429);
    assert.match(err.message, /RESOURCE_EXHAUSTED/);
    const ledger = await suite.mock.settledLedger('ge_rate');
    assert.deepEqual(ledger.map((e) => [e.fault, e.status]), [['rate_429', 429]]);
  });

  test('rate_429 then ok with retryOptions: the SDK retries once and succeeds', TEST_TIMEOUT, async () => {
    const res = await client('ge_rate_retry', { retryOptions: fastRetry })
      .models.generateContent({ model: MODEL, contents });
    assert.equal(res.text, TEXT);
    const ledger = await suite.mock.settledLedger('ge_rate_retry');
    assert.deepEqual(ledger.map((e) => [e.fault, e.status]), [['rate_429', 429], ['ok', 200]]);
  });

  test('overloaded (503 UNAVAILABLE) twice then ok with retryOptions: retried and succeeds', TEST_TIMEOUT, async () => {
    const res = await client('ge_overloaded_retry', { retryOptions: fastRetry })
      .models.generateContent({ model: MODEL, contents });
    assert.equal(res.text, TEXT);
    const ledger = await suite.mock.settledLedger('ge_overloaded_retry');
    assert.deepEqual(ledger.map((e) => [e.fault, e.status]), [['overloaded', 503], ['overloaded', 503], ['ok', 200]]);
  });

  // A TCP close in the middle of the chunked body: undici fails the body read with
  // `TypeError: terminated`, and genai's SSE reader passes it on.
  test('stream_cut: generateContentStream throws "terminated" after the events sent', TEST_TIMEOUT, async () => {
    let text = '';
    const err = await rejection(async () => {
      const stream = await client('ge_cut').models.generateContentStream({ model: MODEL, contents });
      for await (const chunk of stream) text += chunk.text ?? '';
    });
    assert.match(err.message, /terminated/);
    assert.equal(text.trim(), firstWords(TEXT, 2));
    const ledger = await suite.mock.settledLedger('ge_cut');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].outcome, 'cut');
    assert.equal(ledger[0].events_sent, 2);
  });
});
