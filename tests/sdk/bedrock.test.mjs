// The official `@aws-sdk/client-bedrock-runtime` (3.1178.0, pinned; its retries live in @smithy/core
// 3.41.1) against `llmchaos serve`, unmodified but for the endpoint and dummy credentials.
//
// The HTTP handler is chosen by one variable: LLMCHAOS_BEDROCK_HANDLER=http1 gives the client
// `new NodeHttpHandler()` (HTTP/1.1); anything else, or unset, keeps the SDK's default handler
// (NodeHttp2Handler: h2c with prior knowledge against an http:// endpoint), which `llmchaos serve`
// answers over HTTP/2 (http2/README.md); every attempt's ledger entry names the protocol it came by.
//
// What @smithy/core 3.41.1 does (dist-cjs/submodules/retry/index.js), which these tests hold it to:
// - standard and adaptive modes: 3 attempts; only the initial request is retried, never the event
//   stream once it started;
// - the 2026 retry behaviour is unconditional (CHANGELOG 3.40.0: "Enable the 2026 standard retry
//   behavior unconditionally"; neither AWS_NEW_RETRIES_2026 nor SMITHY_NEW_RETRIES_2026 is read): a
//   throttling error backs off from a 1,000 ms base, any other retryable one from 50 ms, with full
//   jitter (`Math.random() * min(base * 2^i, 20 s)`);
// - `x-amz-retry-after` (ms) is honoured, bounded: delay = max(jittered, min(hint, jittered + 5 s)).
// The backoff tests pin Math.random (the SDK's only source of jitter) so each delay is one number.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';

import {
  BedrockRuntimeClient,
  ConverseCommand,
  ConverseStreamCommand,
  InternalServerException,
  ModelStreamErrorException,
  ServiceUnavailableException,
  ThrottlingException,
  ValidationException,
} from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';

import { rejection, serveForSuite } from './lib/mock.mjs';

const TEXT = 'sphinx of black quartz judge my vow';
const HANDLER = process.env.LLMCHAOS_BEDROCK_HANDLER === 'http1' ? 'http1' : 'sdk-default';
const MODEL = 'anthropic.claude-3-haiku-20240307-v1:0';
const messages = [{ role: 'user', content: [{ text: 'say the canonical text' }] }];
const TEST_TIMEOUT = { timeout: 30_000 };

// The in-stream exception frames (`:exception-type`) and the class the SDK must raise for each.
const IN_STREAM = {
  throttlingException: ThrottlingException,
  serviceUnavailableException: ServiceUnavailableException,
  modelStreamErrorException: ModelStreamErrorException,
  internalServerException: InternalServerException,
  validationException: ValidationException,
};

const ok = { fault: 'ok', text: TEXT };
const routes = {
  br_plain: { dialect: 'bedrock', steps: [ok] },
  br_stream: { dialect: 'bedrock', steps: [ok] },
  br_throttle: { dialect: 'bedrock', steps: [{ fault: 'rate_429', times: 2, retry_after_ms: 1 }, ok] },
  br_standard: { dialect: 'bedrock', steps: [{ fault: 'rate_429', times: 10, retry_after_ms: 1 }] },
  br_adaptive: { dialect: 'bedrock', steps: [{ fault: 'rate_429', times: 10, retry_after_ms: 1 }] },
  br_base_throttle: { dialect: 'bedrock', steps: [{ fault: 'rate_429', retry_after_ms: 1 }, ok] },
  br_base_throttle_env: { dialect: 'bedrock', steps: [{ fault: 'rate_429', retry_after_ms: 1 }, ok] },
  br_base_transient: { dialect: 'bedrock', steps: [{ fault: 'overloaded', retry_after_ms: 1 }, ok] },
  br_hint: { dialect: 'bedrock', steps: [{ fault: 'rate_429', retry_after_ms: 2500 }, ok] },
  br_hint_long: { dialect: 'bedrock', steps: [{ fault: 'rate_429', retry_after_ms: 9000 }, ok] },
  br_crc: { dialect: 'bedrock', steps: [{ fault: 'malformed_event', text: TEXT }] },
  ...Object.fromEntries(Object.keys(IN_STREAM).map((name) => [
    `br_exc_${name}`, { dialect: 'bedrock', steps: [{ fault: 'stream_error', body: name, text: TEXT }] }])),
};

describe(`@aws-sdk/client-bedrock-runtime against llmchaos serve (handler: ${HANDLER})`, () => {
  const suite = serveForSuite(routes);
  const clients = [];
  after(() => { for (const c of clients) c.destroy(); });
  const client = (route, opts = {}) => {
    const c = new BedrockRuntimeClient({
      region: 'us-east-1',
      endpoint: suite.mock.url(route),
      credentials: { accessKeyId: 'AKIDLLMCHAOSEXAMPLE', secretAccessKey: 'llmchaos-example-secret' },
      ...(HANDLER === 'http1' ? { requestHandler: new NodeHttpHandler() } : {}),
      ...opts,
    });
    clients.push(c);
    return c;
  };
  const converse = (route, opts) => client(route, opts).send(new ConverseCommand({ modelId: MODEL, messages }));
  const streamText = async (route, opts) => {
    const res = await client(route, opts).send(new ConverseStreamCommand({ modelId: MODEL, messages }));
    let text = '';
    const kinds = [];
    for await (const event of res.stream) {
      kinds.push(Object.keys(event)[0]);
      if (event.contentBlockDelta?.delta?.text !== undefined) text += event.contentBlockDelta.delta.text;
    }
    return { text, kinds };
  };
  // One SDK call's attempts as the mock saw them: one invocation id, `attempt=1..N; max=M` in order.
  const assertOneCall = (ledger, n, max = 3) => {
    assert.equal(ledger.length, n, `attempts: ${JSON.stringify(ledger.map((e) => [e.fault, e.status]))}`);
    assert.equal(new Set(ledger.map((e) => e.amz_sdk_invocation_id)).size, 1, 'one amz-sdk-invocation-id');
    assert.match(ledger[0].amz_sdk_invocation_id, /^[0-9a-f-]{36}$/);
    const protocol = HANDLER === 'http1' ? 'http/1.1' : 'h2';  // the SDK's default handler speaks h2c
    assert.ok(ledger.every((e) => e.protocol === protocol), `protocols: ${ledger.map((e) => e.protocol)}`);
    assert.deepEqual(ledger.map((e) => e.amz_sdk_request), ledger.map((_, i) => `attempt=${i + 1}; max=${max}`));
  };
  const gapMs = (ledger) => ledger[1].received_at_ms - ledger[0].received_at_ms;
  // Runs `fn` with the SDK's jitter fixed at `r` (and `env` set), then puts both back.
  const pinned = async (r, env, fn) => {
    const random = Math.random;
    const saved = Object.fromEntries(Object.keys(env).map((k) => [k, process.env[k]]));
    Math.random = () => r;
    Object.assign(process.env, env);
    try {
      return await fn();
    } finally {
      Math.random = random;
      for (const [k, v] of Object.entries(saved)) if (v === undefined) delete process.env[k]; else process.env[k] = v;
    }
  };

  test('converse returns the route\'s text; one attempt, SigV4-signed, attempt=1; max=3', TEST_TIMEOUT, async () => {
    const res = await converse('br_plain');
    assert.equal(res.output.message.content.map((b) => b.text).join(''), TEXT);
    assert.equal(res.stopReason, 'end_turn');
    assert.equal(res.$metadata.attempts, 1);
    const ledger = await suite.mock.settledLedger('br_plain');
    assertOneCall(ledger, 1);
    assert.equal(ledger[0].path, `/model/${encodeURIComponent(MODEL)}/converse`);
    assert.equal(ledger[0].status, 200);
  });

  test('converseStream: the text deltas joined equal the route\'s text, messageStart to metadata', TEST_TIMEOUT, async () => {
    const { text, kinds } = await streamText('br_stream');
    assert.equal(text, TEXT);
    assert.equal(kinds[0], 'messageStart');
    assert.ok(kinds.includes('messageStop'), kinds.join(' '));
    const ledger = await suite.mock.settledLedger('br_stream');
    assertOneCall(ledger, 1);
    assert.equal(ledger[0].stream, true);
    assert.equal(ledger[0].outcome, 'completed');
  });

  test('a ThrottlingException before the stream is retried by the SDK: 3 attempts of one call, then the text', TEST_TIMEOUT, async () => {
    const { text } = await streamText('br_throttle');
    assert.equal(text, TEXT);
    const ledger = await suite.mock.settledLedger('br_throttle');
    assertOneCall(ledger, 3);
    assert.deepEqual(ledger.map((e) => e.status), [429, 429, 200]);
  });

  for (const mode of ['standard', 'adaptive']) {
    test(`retryMode ${mode}: a persistent throttle is sent 3 times, then ThrottlingException`, TEST_TIMEOUT, async () => {
      const err = await rejection(() => converse(`br_${mode}`, { retryMode: mode }));
      assert.ok(err instanceof ThrottlingException, `expected ThrottlingException, got ${err?.name}: ${err?.message}`);
      assert.equal(err.$metadata.attempts, 3);
      const ledger = await suite.mock.settledLedger(`br_${mode}`);
      assertOneCall(ledger, 3);
      assert.ok(ledger.every((e) => e.status === 429 && e.fault === 'rate_429'));
    });
  }

  // One converse on `route` with the jitter pinned at `r`: a first attempt and one retry, in one call.
  // Returns the first attempt's ledger entry and the gap between the two arrivals.
  const retriedOnce = async (route, r, env = { AWS_NEW_RETRIES_2026: 'true' }) => {
    const res = await pinned(r, env, () => converse(route));
    assert.equal(res.$metadata.attempts, 2);
    const ledger = await suite.mock.settledLedger(route);
    assertOneCall(ledger, 2);
    return { first: ledger[0], gap: gapMs(ledger) };
  };

  // Math.random pinned at 0.999: the first retry waits floor(0.999 * base): 999 ms for a throttle, 49 ms
  // for a 503. The bounds are generous (a loaded machine adds time, never takes it away).
  for (const [route, env] of [['br_base_throttle', {}], ['br_base_throttle_env', { AWS_NEW_RETRIES_2026: 'true' }]]) {
    const set = Object.keys(env).length ? 'AWS_NEW_RETRIES_2026=true' : 'AWS_NEW_RETRIES_2026 unset';
    test(`2026 retries (${set}): a throttle backs off from a 1 s base`, TEST_TIMEOUT, async () => {
      const { gap } = await retriedOnce(route, 0.999, env);
      assert.ok(gap >= 900 && gap < 3000, `gap ${gap} ms, expected about 999`);
    });
  }

  test('2026 retries: a ServiceUnavailableException (503) backs off from a 50 ms base', TEST_TIMEOUT, async () => {
    const { first, gap } = await retriedOnce('br_base_transient', 0.999);
    assert.equal(first.status, 503);
    assert.ok(gap < 700, `gap ${gap} ms, expected about 49`);
  });

  // Math.random pinned at 0: the jittered delay is 0, so the wait is the hint's alone (at most 5 s).
  test('x-amz-retry-after: 2500 ms is waited out before the retry', TEST_TIMEOUT, async () => {
    const { first, gap } = await retriedOnce('br_hint', 0);
    assert.equal(first.retry_after_form, 'amz_ms');
    assert.equal(first.retry_after_sent_ms, 2500);
    assert.ok(gap >= 2450 && gap < 4500, `gap ${gap} ms, expected about 2500`);
  });

  test('x-amz-retry-after: 9000 ms is honoured only up to the jittered delay + 5 s', TEST_TIMEOUT, async () => {
    const { first, gap } = await retriedOnce('br_hint_long', 0);
    assert.equal(first.retry_after_sent_ms, 9000);
    assert.ok(gap >= 4950 && gap < 7000, `gap ${gap} ms, expected about 5000`);
  });

  for (const [frame, Class] of Object.entries(IN_STREAM)) {
    test(`an in-stream ${frame} frame surfaces as ${Class.name}, never retried`, TEST_TIMEOUT, async () => {
      const route = `br_exc_${frame}`;
      const err = await rejection(() => streamText(route));
      assert.ok(err instanceof Class, `expected ${Class.name}, got ${err?.name}: ${err?.message}`);
      assert.equal(err.name, Class.name);
      const ledger = await suite.mock.settledLedger(route);
      assertOneCall(ledger, 1);
      assert.equal(ledger[0].status, 200);
    });
  }

  test('a frame with a bad CRC (malformed_event) raises a checksum error, never retried', TEST_TIMEOUT, async () => {
    const err = await rejection(() => streamText('br_crc'));
    assert.match(err.message, /checksum/i);
    assert.ok(!(err instanceof ThrottlingException));
    assertOneCall(await suite.mock.settledLedger('br_crc'), 1);
  });
});
