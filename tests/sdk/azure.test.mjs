// The official `openai` SDK's AzureOpenAI client (6.49.0, pinned) against `llmchaos serve` routes of
// dialect "azure": endpoint = the route's URL (the SDK adds /openai), apiVersion, deployment, apiKey;
// unmodified otherwise. Each fault as the SDK sees it, plain and streamed.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { AzureOpenAI, OpenAI } from 'openai';

import { firstWords, rejection, serveForSuite } from './lib/mock.mjs';

const TEXT = 'the quick brown fox jumps over the lazy dog';
const ok = { fault: 'ok', text: TEXT };
const routes = {
  az_plain: { dialect: 'azure', steps: [ok] },
  az_stream: { dialect: 'azure', steps: [ok] },
  az_helper: { dialect: 'azure', steps: [ok] },
  az_model: { dialect: 'azure', steps: [ok] },
  az_rate: { dialect: 'azure', steps: [{ fault: 'rate_429', retry_after_ms: 400 }, ok] },
  az_rate_stream: { dialect: 'azure', steps: [{ fault: 'rate_429', retry_after_ms: 300 }, ok] },
  az_quota: { dialect: 'azure', steps: [{ fault: 'quota_429', times: 3 }] },
  az_overloaded: { dialect: 'azure', steps: [{ fault: 'overloaded', times: 2, retry_after_ms: 1 }, ok] },
  az_auth: { dialect: 'azure', steps: [{ fault: 'auth' }] },
  az_filter: { dialect: 'azure', steps: [{ fault: 'policy' }] },
  az_filter_stream: { dialect: 'azure', steps: [{ fault: 'policy', cut_after_events: 2, text: TEXT }] },
  az_cut: { dialect: 'azure', steps: [{ fault: 'stream_cut', cut_after_events: 2, text: TEXT }] },
  az_cut_helper: { dialect: 'azure', steps: [{ fault: 'stream_cut', cut_after_events: 2, text: TEXT }] },
  az_cut_plain: { dialect: 'azure', steps: [{ fault: 'stream_cut', text: TEXT }, ok] },
  az_error: { dialect: 'azure', steps: [{ fault: 'stream_error', cut_after_events: 2, text: TEXT }] },
  az_malformed: { dialect: 'azure', steps: [{ fault: 'malformed_event', cut_after_events: 1, text: TEXT }] },
  az_noterm: { dialect: 'azure', steps: [{ fault: 'no_terminator', text: TEXT }] },
  az_server: { dialect: 'azure', steps: [{ fault: 'server_500', times: 3 }] },
  az_bad: { dialect: 'azure', steps: [{ fault: 'bad_request' }] },
};
const messages = [{ role: 'user', content: 'say the canonical text' }];
const TEST_TIMEOUT = { timeout: 15_000 };
const API_VERSION = '2024-10-21';

describe('openai SDK AzureOpenAI client against llmchaos serve', () => {
  const suite = serveForSuite(routes);
  const client = (route, opts = {}) => new AzureOpenAI({
    endpoint: suite.mock.url(route), apiKey: 'azure-key', apiVersion: API_VERSION, deployment: 'dep-1', timeout: 10_000, ...opts,
  });
  const gaps = (ledger) => ledger.slice(1).map((e, i) => e.received_at_ms - ledger[i].finished_at_ms);

  test('chat.completions.create on the deployment route: the text, the filter results, the ledgered deployment', TEST_TIMEOUT, async () => {
    const res = await client('az_plain').chat.completions.create({ model: 'gpt-4o', messages });
    assert.equal(res.choices[0].message.content, TEXT);
    assert.equal(res.model, 'dep-1');
    assert.equal(res.prompt_filter_results[0].content_filter_results.hate.severity, 'safe');
    assert.equal(res.choices[0].content_filter_results.violence.filtered, false);
    const ledger = await suite.mock.settledLedger('az_plain');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].dialect, 'azure');
    assert.equal(ledger[0].path, `/openai/deployments/dep-1/chat/completions?api-version=${API_VERSION}`);
    assert.equal(ledger[0].model, 'dep-1');
    assert.equal(res._request_id, ledger[0].request_id);
  });

  test('without a deployment option the SDK puts the model in the path; the answer is for that deployment', TEST_TIMEOUT, async () => {
    const res = await client('az_model', { deployment: undefined }).chat.completions.create({ model: 'gpt-4o-mini', messages });
    assert.equal(res.model, 'gpt-4o-mini');
    assert.equal((await suite.mock.settledLedger('az_model'))[0].path, `/openai/deployments/gpt-4o-mini/chat/completions?api-version=${API_VERSION}`);
  });

  test('stream: the prompt filter chunk first (no choices), one chunk per word, then [DONE]', TEST_TIMEOUT, async () => {
    const stream = await client('az_stream').chat.completions.create({ model: 'gpt-4o', messages, stream: true });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    assert.deepEqual(chunks[0].choices, []);
    assert.ok(chunks[0].prompt_filter_results);
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    assert.equal(text, TEXT);
    assert.equal(chunks.at(-1).choices[0].finish_reason, 'stop');
    const ledger = await suite.mock.settledLedger('az_stream');
    assert.equal(ledger[0].stream, true);
    assert.equal(ledger[0].outcome, 'completed');
    assert.equal(ledger[0].events_sent, TEXT.split(' ').length);
  });

  test('chat.completions.stream().finalChatCompletion() accumulates the text through the filter chunk', TEST_TIMEOUT, async () => {
    const final = await client('az_helper').chat.completions.stream({ model: 'gpt-4o', messages }).finalChatCompletion();
    assert.equal(final.choices[0].message.content, TEXT);
    assert.equal(final.choices[0].finish_reason, 'stop');
  });

  test('rate_429 then ok: retried once, no earlier than retry-after-ms says', TEST_TIMEOUT, async () => {
    const res = await client('az_rate').chat.completions.create({ model: 'gpt-4o', messages });
    assert.equal(res.choices[0].message.content, TEXT);
    const ledger = await suite.mock.settledLedger('az_rate');
    assert.deepEqual(ledger.map((e) => [e.fault, e.status, e.x_stainless_retry_count]),
                     [['rate_429', 429, '0'], ['ok', 200, '1']]);
    assert.ok(gaps(ledger)[0] >= 380, `the retry came ${gaps(ledger)[0]} ms after the 429, before retry-after-ms 400`);
  });

  test('rate_429 before a stream: retried after retry-after-ms, the retry streams whole', TEST_TIMEOUT, async () => {
    const final = await client('az_rate_stream').chat.completions.stream({ model: 'gpt-4o', messages }).finalChatCompletion();
    assert.equal(final.choices[0].message.content, TEXT);
    const ledger = await suite.mock.settledLedger('az_rate_stream');
    assert.deepEqual(ledger.map((e) => e.status), [429, 200]);
    assert.ok(gaps(ledger)[0] >= 280, `the retry came ${gaps(ledger)[0]} ms after the 429`);
  });

  test('quota_429: retried like any 429 (3 attempts), then RateLimitError insufficient_quota', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('az_quota').chat.completions.create({ model: 'gpt-4o', messages }));
    assert.ok(err instanceof OpenAI.RateLimitError, `expected RateLimitError, got ${err}`);
    assert.equal(err.code, 'insufficient_quota');
    assert.equal((await suite.mock.settledLedger('az_quota')).length, 3);
  });

  test('overloaded twice: both 503s retried, the third attempt answers', TEST_TIMEOUT, async () => {
    const res = await client('az_overloaded').chat.completions.create({ model: 'gpt-4o', messages });
    assert.equal(res.choices[0].message.content, TEXT);
    assert.deepEqual((await suite.mock.settledLedger('az_overloaded')).map((e) => e.status), [503, 503, 200]);
  });

  test('server_500 three times: retried twice, then InternalServerError', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('az_server').chat.completions.create({ model: 'gpt-4o', messages }));
    assert.ok(err instanceof OpenAI.InternalServerError, `expected InternalServerError, got ${err}`);
    assert.equal((await suite.mock.settledLedger('az_server')).length, 3);
  });

  test("auth: Azure's 401 body (code 401, Access denied) as AuthenticationError, not retried", TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('az_auth').chat.completions.create({ model: 'gpt-4o', messages }));
    assert.ok(err instanceof OpenAI.AuthenticationError, `expected AuthenticationError, got ${err}`);
    assert.equal(err.code, '401');
    assert.match(err.message, /Access denied due to invalid subscription key/);
    assert.equal((await suite.mock.settledLedger('az_auth')).length, 1);
  });

  test('bad_request: BadRequestError context_length_exceeded, not retried', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('az_bad').chat.completions.create({ model: 'gpt-4o', messages }));
    assert.ok(err instanceof OpenAI.BadRequestError, `expected BadRequestError, got ${err}`);
    assert.equal(err.code, 'context_length_exceeded');
    assert.equal((await suite.mock.settledLedger('az_bad')).length, 1);
  });

  test('content filter 400: BadRequestError content_filter with the innererror, not retried', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('az_filter').chat.completions.create({ model: 'gpt-4o', messages }));
    assert.ok(err instanceof OpenAI.BadRequestError, `expected BadRequestError, got ${err}`);
    assert.equal(err.status, 400);
    assert.equal(err.code, 'content_filter');
    assert.equal(err.error.innererror.code, 'ResponsibleAIPolicyViolation');
    assert.equal(err.error.innererror.content_filter_result.violence.filtered, true);
    assert.equal((await suite.mock.settledLedger('az_filter')).length, 1);
  });

  test('content filter on a stream: two words, then finish_reason content_filter with the flagged category, no throw', TEST_TIMEOUT, async () => {
    const stream = await client('az_filter_stream').chat.completions.create({ model: 'gpt-4o', messages, stream: true });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    const text = chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('');
    assert.equal(text.trim(), firstWords(TEXT, 2));
    const last = chunks.filter((c) => c.choices.length).at(-1).choices[0];
    assert.equal(last.finish_reason, 'content_filter');
    assert.equal(last.content_filter_results.violence.filtered, true);
  });

  // A TCP close mid body: undici fails the read with `TypeError: terminated`; the 200 had arrived, so
  // the SDK does not retry.
  test('stream_cut: the iterator throws "terminated" after two words, with no retry', TEST_TIMEOUT, async () => {
    let text = '';
    const err = await rejection(async () => {
      const stream = await client('az_cut').chat.completions.create({ model: 'gpt-4o', messages, stream: true });
      for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    });
    assert.match(err.message, /terminated/);
    assert.equal(text.trim(), firstWords(TEXT, 2));
    const ledger = await suite.mock.settledLedger('az_cut');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].outcome, 'cut');
    assert.equal(ledger[0].events_sent, 2);
  });

  test('stream_cut: finalChatCompletion() rejects', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('az_cut_helper').chat.completions.stream({ model: 'gpt-4o', messages }).finalChatCompletion());
    assert.match(err.message, /terminated/);
    assert.equal((await suite.mock.settledLedger('az_cut_helper')).length, 1);
  });

  test('stream_cut on a plain answer: the half body fails, the SDK does not retry a read error', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('az_cut_plain').chat.completions.create({ model: 'gpt-4o', messages }));
    assert.ok(err, 'a cut plain body must not parse as an answer');
    assert.equal((await suite.mock.settledLedger('az_cut_plain'))[0].outcome, 'cut');
  });

  test('stream_error: the error chunk after two words throws an APIError', TEST_TIMEOUT, async () => {
    let text = '';
    const err = await rejection(async () => {
      const stream = await client('az_error').chat.completions.create({ model: 'gpt-4o', messages, stream: true });
      for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    });
    assert.ok(err instanceof OpenAI.APIError, `expected APIError, got ${err}`);
    assert.equal(text.trim(), firstWords(TEXT, 2));
    assert.equal((await suite.mock.settledLedger('az_error'))[0].committed, true);
  });

  test('malformed_event: the SDK throws on the chunk that is not JSON', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('az_malformed').chat.completions.stream({ model: 'gpt-4o', messages }).finalChatCompletion());
    assert.ok(err instanceof SyntaxError || /JSON/.test(err.message), `expected a JSON error, got ${err}`);
    assert.equal((await suite.mock.settledLedger('az_malformed')).length, 1);
  });

  test('no_terminator: the stream ends without [DONE] and without an error', TEST_TIMEOUT, async () => {
    const stream = await client('az_noterm').chat.completions.create({ model: 'gpt-4o', messages, stream: true });
    let text = '';
    for await (const c of stream) text += c.choices[0]?.delta?.content ?? '';
    assert.equal(text, TEXT);
    assert.equal((await suite.mock.settledLedger('az_noterm'))[0].fault, 'no_terminator');
  });
});
