// The official `openai` SDK (6.49.0, pinned) through its Responses API (client.responses.create /
// .stream) against `llmchaos serve` routes of dialect "responses", unmodified but for baseURL.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import OpenAI from 'openai';

import { firstWords, rejection, serveForSuite } from './lib/mock.mjs';
import { openaiClient } from './lib/openai.mjs';

const TEXT = 'the quick brown fox jumps over the lazy dog';
const ok = { fault: 'ok', text: TEXT };
const routes = {
  rs_plain: { dialect: 'responses', steps: [ok] },
  rs_stream: { dialect: 'responses', steps: [ok] },
  rs_helper: { dialect: 'responses', steps: [ok] },
  rs_tool: { dialect: 'responses', steps: [ok, ok] },  // the call, then the answer to its result
  rs_tool_stream: { dialect: 'responses', steps: [ok] },
  rs_rate: { dialect: 'responses', steps: [{ fault: 'rate_429', retry_after_ms: 1 }, ok] },
  rs_quota: { dialect: 'responses', steps: [{ fault: 'quota_429', times: 3 }] },
  rs_overloaded: { dialect: 'responses', steps: [{ fault: 'overloaded', times: 2, retry_after_ms: 1 }, ok] },
  rs_auth: { dialect: 'responses', steps: [{ fault: 'auth' }] },
  rs_cut: { dialect: 'responses', steps: [{ fault: 'stream_cut', cut_after_events: 2, text: TEXT }] },
  rs_cut_helper: { dialect: 'responses', steps: [{ fault: 'stream_cut', cut_after_events: 2, text: TEXT }] },
  rs_failed: { dialect: 'responses', steps: [{ fault: 'stream_error', cut_after_events: 2, text: TEXT }] },
  rs_failed_helper: { dialect: 'responses', steps: [{ fault: 'stream_error', cut_after_events: 2, text: TEXT }] },
  rs_policy: { dialect: 'responses', steps: [{ fault: 'policy', cut_after_events: 2, text: TEXT }] },
  rs_malformed: { dialect: 'responses', steps: [{ fault: 'malformed_event', cut_after_events: 1, text: TEXT }] },
  rs_noterm: { dialect: 'responses', steps: [{ fault: 'no_terminator', text: TEXT }] },
  // Background responses: the create's stream is cut, the stored response is then read back (the
  // resume and the retrieves are attempts too: `ok` steps, the route's `then` after them).
  rs_bg: { dialect: 'responses', steps: [{ fault: 'stream_cut', cut_after_events: 3, text: TEXT }] },
  rs_bg_helper: { dialect: 'responses', steps: [{ fault: 'stream_cut', cut_after_events: 2, text: TEXT }] },
};
const input = 'say the canonical text';
const tools = [{
  type: 'function', name: 'record_label', description: 'Record the label.',
  parameters: { type: 'object', properties: { label: { type: 'string' } }, required: ['label'] },
}];
const TEST_TIMEOUT = { timeout: 15_000 };

describe('openai SDK Responses API against llmchaos serve', () => {
  const suite = serveForSuite(routes);
  const client = (route, opts = {}) => openaiClient(suite, route, opts);


  test('responses.create returns the scripted text as output_text, with the ledgered request id', TEST_TIMEOUT, async () => {
    const res = await client('rs_plain').responses.create({ model: 'gpt-test', input });
    assert.equal(res.object, 'response');
    assert.equal(res.status, 'completed');
    assert.match(res.id, /^resp_/);
    assert.equal(res.output_text, TEXT);
    assert.equal(res.output[0].type, 'message');
    assert.equal(res.usage.output_tokens, TEXT.split(' ').length);
    const ledger = await suite.mock.settledLedger('rs_plain');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].dialect, 'responses');
    assert.equal(ledger[0].stream, false);
    assert.equal(ledger[0].outcome, 'completed');
    assert.equal(ledger[0].x_stainless_retry_count, '0');
    assert.equal(res._request_id, ledger[0].request_id);
  });

  test('responses.create with stream: typed events, response.created first, numbered, response.completed last', TEST_TIMEOUT, async () => {
    const stream = await client('rs_stream').responses.create({ model: 'gpt-test', input, stream: true });
    const events = [];
    for await (const ev of stream) events.push(ev);
    assert.equal(events[0].type, 'response.created');
    assert.equal(events[1].type, 'response.in_progress');
    assert.equal(events.at(-1).type, 'response.completed');
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => i));
    const deltas = events.filter((e) => e.type === 'response.output_text.delta');
    assert.equal(deltas.length, TEXT.split(' ').length);
    assert.equal(deltas.map((e) => e.delta).join(''), TEXT);
    assert.equal(events.at(-1).response.status, 'completed');
    assert.ok(!events.some((e) => e.type === 'error'));
    const ledger = await suite.mock.settledLedger('rs_stream');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].stream, true);
    assert.equal(ledger[0].outcome, 'completed');
    assert.equal(ledger[0].events_sent, deltas.length);
  });

  test('responses.stream().finalResponse() accumulates the scripted text', TEST_TIMEOUT, async () => {
    let snapshot = '';
    const final = await client('rs_helper').responses.stream({ model: 'gpt-test', input })
      .on('response.output_text.delta', (ev) => { snapshot = ev.snapshot; })
      .finalResponse();
    assert.equal(final.status, 'completed');
    assert.equal(final.output_text, TEXT);
    assert.equal(snapshot, TEXT);
    assert.equal((await suite.mock.settledLedger('rs_helper')).length, 1);
  });

  test('a tool offered: the answer is a function_call item; its function_call_output brings the text', TEST_TIMEOUT, async () => {
    const c = client('rs_tool');
    const first = await c.responses.create({ model: 'gpt-test', input, tools });
    const call = first.output[0];
    assert.equal(call.type, 'function_call');
    assert.equal(call.name, 'record_label');
    assert.equal(call.arguments, '{}');
    assert.match(call.call_id, /^call_/);
    const second = await c.responses.create({
      model: 'gpt-test', tools,
      input: [{ role: 'user', content: input },
              { type: 'function_call', call_id: call.call_id, name: call.name, arguments: call.arguments },
              { type: 'function_call_output', call_id: call.call_id, output: '{"ok":true}' }],
    });
    assert.equal(second.output_text, TEXT);
  });

  test('a streamed tool call: finalResponse() holds the function_call with its arguments', TEST_TIMEOUT, async () => {
    const final = await client('rs_tool_stream').responses.stream({ model: 'gpt-test', input, tools }).finalResponse();
    assert.equal(final.status, 'completed');
    assert.equal(final.output[0].type, 'function_call');
    assert.equal(final.output[0].name, 'record_label');
    assert.equal(final.output[0].arguments, '{}');
  });

  test('rate_429 then ok: the SDK retries once and succeeds; retry counts 0 then 1', TEST_TIMEOUT, async () => {
    const res = await client('rs_rate').responses.create({ model: 'gpt-test', input });
    assert.equal(res.output_text, TEXT);
    const ledger = await suite.mock.settledLedger('rs_rate');
    assert.deepEqual(ledger.map((e) => [e.fault, e.status, e.x_stainless_retry_count]),
                     [['rate_429', 429, '0'], ['ok', 200, '1']]);
  });

  test('quota_429: the SDK retries it like any 429 and throws RateLimitError insufficient_quota after 3 attempts', TEST_TIMEOUT, async () => {
    // No retry-after on a quota body: the SDK's own backoff (~0.4 s, ~0.8 s).
    const err = await rejection(() => client('rs_quota').responses.create({ model: 'gpt-test', input }));
    assert.ok(err instanceof OpenAI.RateLimitError, `expected RateLimitError, got ${err}`);
    assert.equal(err.status, 429);
    assert.equal(err.code, 'insufficient_quota');
    const ledger = await suite.mock.settledLedger('rs_quota');
    assert.deepEqual(ledger.map((e) => [e.fault, e.status, e.x_stainless_retry_count]),
                     [['quota_429', 429, '0'], ['quota_429', 429, '1'], ['quota_429', 429, '2']]);
  });

  test('overloaded twice before a stream: the SDK retries both 503s and the third attempt streams', TEST_TIMEOUT, async () => {
    const final = await client('rs_overloaded').responses.stream({ model: 'gpt-test', input }).finalResponse();
    assert.equal(final.output_text, TEXT);
    const ledger = await suite.mock.settledLedger('rs_overloaded');
    assert.deepEqual(ledger.map((e) => [e.status, e.x_stainless_retry_count]), [[503, '0'], [503, '1'], [200, '2']]);
  });

  test('auth: AuthenticationError with invalid_api_key, not retried', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('rs_auth').responses.create({ model: 'gpt-test', input }));
    assert.ok(err instanceof OpenAI.AuthenticationError, `expected AuthenticationError, got ${err}`);
    assert.equal(err.code, 'invalid_api_key');
    assert.equal((await suite.mock.settledLedger('rs_auth')).length, 1);
  });

  // A TCP close mid body: undici fails the read with `TypeError: terminated`; the 200 had arrived, so
  // the SDK does not retry.
  test('stream_cut: the raw iterator throws "terminated" after two deltas, with no retry', TEST_TIMEOUT, async () => {
    let text = '';
    const err = await rejection(async () => {
      const stream = await client('rs_cut').responses.create({ model: 'gpt-test', input, stream: true });
      for await (const ev of stream) if (ev.type === 'response.output_text.delta') text += ev.delta;
    });
    assert.match(err.message, /terminated/);
    assert.equal(text.trim(), firstWords(TEXT, 2));
    const ledger = await suite.mock.settledLedger('rs_cut');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].outcome, 'cut');
    assert.equal(ledger[0].events_sent, 2);
  });

  test('stream_cut: finalResponse() rejects, no response.completed was seen', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('rs_cut_helper').responses.stream({ model: 'gpt-test', input }).finalResponse());
    assert.match(err.message, /terminated/);
    assert.equal((await suite.mock.settledLedger('rs_cut_helper')).length, 1);
  });

  // The SDK does not throw on response.failed: it is an event like the others, and the accumulator
  // takes its response (status failed, error set) as the final one. A client must check status.
  test('stream_error: response.failed arrives as an event after two deltas, with response.error, no throw', TEST_TIMEOUT, async () => {
    const stream = await client('rs_failed').responses.create({ model: 'gpt-test', input, stream: true });
    const events = [];
    for await (const ev of stream) events.push(ev);
    const last = events.at(-1);
    assert.equal(last.type, 'response.failed');
    assert.equal(last.sequence_number, events.length - 1);
    assert.equal(last.response.status, 'failed');
    assert.equal(last.response.error.code, 'server_error');
    assert.equal(events.filter((e) => e.type === 'response.output_text.delta').length, 2);
    const ledger = await suite.mock.settledLedger('rs_failed');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].fault, 'stream_error');
    assert.equal(ledger[0].committed, true);
  });

  test('stream_error: finalResponse() resolves with status failed, not an exception', TEST_TIMEOUT, async () => {
    const final = await client('rs_failed_helper').responses.stream({ model: 'gpt-test', input }).finalResponse();
    assert.equal(final.status, 'failed');
    assert.equal(final.error.code, 'server_error');
  });

  test('policy on a stream: response.incomplete with incomplete_details content_filter after two deltas', TEST_TIMEOUT, async () => {
    const final = await client('rs_policy').responses.stream({ model: 'gpt-test', input }).finalResponse();
    assert.equal(final.status, 'incomplete');
    assert.equal(final.incomplete_details.reason, 'content_filter');
    assert.equal(final.output_text.trim(), firstWords(TEXT, 2));
  });

  test('malformed_event: the SDK throws on the delta that is not JSON', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('rs_malformed').responses.stream({ model: 'gpt-test', input }).finalResponse());
    assert.ok(err instanceof SyntaxError || /JSON/.test(err.message), `expected a JSON error, got ${err}`);
    assert.equal((await suite.mock.settledLedger('rs_malformed')).length, 1);
  });

  // A background create whose stream is cut: what the SDK saw up to the cut (the response id from
  // response.created, the last sequence number, the text of the deltas).
  async function cutBackgroundStream(route) {
    const seen = { id: '', last: -1, text: '' };
    const err = await rejection(async () => {
      const stream = await client(route).responses.create({ model: 'gpt-test', input, stream: true, background: true });
      for await (const ev of stream) {
        if (ev.type === 'response.created') seen.id = ev.response.id;
        if (ev.type === 'response.output_text.delta') seen.text += ev.delta;
        seen.last = ev.sequence_number;
      }
    });
    assert.match(err.message, /terminated/);
    return seen;
  }

  // SPEC 3 rule 0 through the SDK's own API: responses.retrieve(id, { stream: true, starting_after: N }).
  test('background stream_cut: responses.retrieve with stream and starting_after resumes from N+1 to response.completed', TEST_TIMEOUT, async () => {
    const cut = await cutBackgroundStream('rs_bg');
    assert.match(cut.id, /^resp_/);
    assert.equal(cut.text.trim(), firstWords(TEXT, 3));
    const stream = await client('rs_bg').responses.retrieve(cut.id, { stream: true, starting_after: cut.last });
    const events = [];
    for await (const ev of stream) events.push(ev);
    assert.deepEqual(events.map((e) => e.sequence_number), events.map((_, i) => cut.last + 1 + i));
    assert.ok(!events.some((e) => e.type === 'response.created'), 'the resume starts after the cut, not at the start');
    const rest = events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    assert.equal(cut.text + rest, TEXT);  // each token once
    assert.equal(events.at(-1).type, 'response.completed');
    assert.equal(events.at(-1).response.status, 'completed');
    assert.equal(events.at(-1).response.background, true);

    // The plain retrieve of the stored response: the completed object, output_text computed by the SDK.
    const stored = await client('rs_bg').responses.retrieve(cut.id);
    assert.equal(stored.status, 'completed');
    assert.equal(stored.output_text, TEXT);

    const ledger = await suite.mock.settledLedger('rs_bg');
    assert.equal(ledger.length, 3);
    assert.equal(ledger[0].background, true);
    assert.equal(ledger[0].outcome, 'cut');
    assert.equal(ledger[1].resume_of, ledger[0].seq);
    assert.equal(ledger[1].starting_after, cut.last);
    assert.equal(ledger[1].path, `/v1/responses/${cut.id}?stream=true&starting_after=${cut.last}`);
    assert.equal(ledger[1].outcome, 'completed');
    assert.equal(ledger[2].resume_of, ledger[0].seq);
    assert.equal(ledger[2].stream, false);
    assert.equal(ledger[0].resume_of, undefined);  // only a resume carries the fields
  });

  // The SDK's stream helper resumes by asking for the whole stored stream (no starting_after on the
  // wire) and dropping the events up to starting_after itself: the mock serves it from the start.
  test('background stream_cut: responses.stream({ response_id, starting_after }) emits the events after N, finalResponse() whole', TEST_TIMEOUT, async () => {
    const cut = await cutBackgroundStream('rs_bg_helper');
    const helper = client('rs_bg_helper').responses.stream({ response_id: cut.id, starting_after: cut.last });
    const emitted = [];
    helper.on('event', (ev) => emitted.push(ev));
    const final = await helper.finalResponse();
    assert.equal(final.output_text, TEXT);
    assert.equal(final.status, 'completed');
    assert.ok(emitted.length > 0);
    assert.ok(emitted.every((e) => e.sequence_number > cut.last), 'the helper emits only the events after starting_after');
    const rest = emitted.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');
    assert.equal(cut.text + rest, TEXT);
    const ledger = await suite.mock.settledLedger('rs_bg_helper');
    assert.equal(ledger.length, 2);
    assert.equal(ledger[1].resume_of, ledger[0].seq);
    assert.equal(ledger[1].starting_after, -1);
  });

  test('retrieve of an unknown response id: NotFoundError with OpenAI\'s message', TEST_TIMEOUT, async () => {
    const err = await rejection(() => client('rs_plain').responses.retrieve('resp_999999'));
    assert.ok(err instanceof OpenAI.NotFoundError, `expected NotFoundError, got ${err}`);
    assert.equal(err.status, 404);
    assert.match(err.message, /Response with id 'resp_999999' not found/);
  });

  // Like [DONE] on chat: a stream that ends cleanly without response.completed is not an error to the
  // SDK; finalResponse() returns the snapshot, still in_progress, with the whole text.
  test('no_terminator: the stream ends without response.completed and without an error', TEST_TIMEOUT, async () => {
    const final = await client('rs_noterm').responses.stream({ model: 'gpt-test', input }).finalResponse();
    assert.equal(final.output_text, TEXT);
    assert.equal(final.status, 'in_progress');
    const ledger = await suite.mock.settledLedger('rs_noterm');
    assert.equal(ledger.length, 1);
    assert.equal(ledger[0].fault, 'no_terminator');
  });
});
