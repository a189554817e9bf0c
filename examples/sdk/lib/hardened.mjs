// The "hardened" client: the SDK's own retries off (maxRetries 0), so every attempt is the team's
// decision, made once per failure in the order of SPEC section 3:
//   1. a request / auth / policy error fails closed (fixing it is the caller's job);
//   2. anything that may have been committed fails closed: visible tokens already streamed, or a
//      timeout / a silent close before the response headers (the provider may have run the call; a
//      second call is not a status check);
//   3. an unknown owner (a bare 500) fails closed (this client has no queue);
//   4. transient (503 / 529 / reset before any byte / a cut before any visible token) or rate (429 with
//      retry-after): retry on the same route when an attempt is left and the wait + the expected latency
//      fit the time left;
//   5. else transient / rate / quota go to the next route (LLMCHAOS_FALLBACK) when an attempt is left;
//   6. else fail closed.
// A quota 429 (openai `insufficient_quota`, an anthropic 429 naming the quota / billing, any 402, or
// `x-should-retry: false`) is never retried on the same route, nor is Bedrock's 400 whose
// x-amzn-ErrorType is ServiceQuotaExceededException.
// The budget is the case's own policy when the harness passes it (LLMCHAOS_POLICY_JSON: attempts, time,
// attempt timeout, backoff, replay_safe, each route's expected latency and approval), else POLICY
// (examples/cases/policies/sdk.toml says the same), times LLMCHAOS_SDK_TIME_SCALE. A replay-safe
// workflow treats a timeout with no byte received (commit unknown) as nothing committed (SPEC rule 2).
import { setTimeout as sleep } from 'node:timers/promises';
import { ContentFiltered, TruncatedStream, causeCodes, chat, describe, readEnv, report } from './common.mjs';

export const POLICY = {
  maxAttempts: 2,          // per request, every route and every layer (the SDK makes none of its own)
  sloMs: 8000,             // the request's time budget
  attemptTimeoutMs: 2000,  // to the response headers, and between two stream events
  expectedLatencyMs: 300,  // what one more attempt is expected to take
  backoffBaseMs: 200,      // exponential, full jitter
  backoffCapMs: 2000,
};

// The budget the loop keeps: `policy` is the case's policy JSON (or undefined: POLICY), `scale` the
// time scale. Times in ms, scaled.
export function budgetOf(policy, scale = 1) {
  const w = policy?.workflow ?? {};
  const b = policy?.backoff ?? {};
  const routes = new Map((policy?.routes ?? []).map((r) => [r.name, r]));
  const num = (v, fallback) => (Number.isFinite(v) ? v : fallback);
  return {
    maxAttempts: num(w.max_total_attempts, POLICY.maxAttempts),
    sloMs: num(w.max_elapsed_ms, POLICY.sloMs) * scale,
    // Under a small --time-scale the scaled attempt timeout would be shorter than a busy machine (other
    // builds on 2 cores) takes to answer over loopback: keep a floor of 2 s real.
    attemptTimeoutMs: Math.max(num(w.attempt_timeout_ms, POLICY.attemptTimeoutMs) * scale, ATTEMPT_TIMEOUT_FLOOR_MS),
    backoffBaseMs: num(b.base_ms, POLICY.backoffBaseMs) * scale,
    backoffCapMs: num(b.cap_ms, POLICY.backoffCapMs) * scale,
    replaySafe: w.replay_safe === true,
    expectedLatencyMs: (name) => num(routes.get(name)?.expected_latency_ms, POLICY.expectedLatencyMs) * scale,
    approved: (name) => routes.get(name)?.approved !== false,
  };
}

const ATTEMPT_TIMEOUT_FLOOR_MS = 2000;
const QUOTA_TEXT = /insufficient_quota|quota|billing|credit/i;

// -> { owner: 'transient'|'rate'|'quota'|'request'|'auth'|'policy'|'unknown', commit: 'none'|'committed'|'unknown', retryAfterMs }
// A silence: the request was sent and no byte came back (a timeout, a close): nothing says whether the
// provider ran the call. A replay-safe workflow retries it (runPolicy); a bare 500 answered, so it is not this.
const SILENT = (why) => ({ owner: 'unknown', commit: 'unknown', silent: true, why });
const streamed = (what, visible) => visible > 0 ? { owner: 'transient', commit: 'committed', why: what }
                                                : { owner: 'transient', commit: 'none', why: what };

// An HTTP error answer: `status`, `header(name)` (null when absent), `body` (the error's text), `code`
// (a machine-readable error code the library parsed, if any).
export function classifyStatus({ status, header, body = '', code }) {
  const shouldRetry = header('x-should-retry');
  const ra = retryAfterMs(header);
  if (status === 402) return { owner: 'quota', commit: 'none', why: '402' };
  if (/^ServiceQuotaExceededException/.test(header('x-amzn-errortype') ?? '')) return { owner: 'quota', commit: 'none', why: `${status} ServiceQuotaExceededException` };
  if (status === 429) {
    const quota = code === 'insufficient_quota' || QUOTA_TEXT.test(body) || shouldRetry === 'false';
    return quota ? { owner: 'quota', commit: 'none', why: 'quota 429' } : { owner: 'rate', commit: 'none', retryAfterMs: ra, why: 'rate 429' };
  }
  if (status === 401 || status === 403) return { owner: 'auth', commit: 'none', why: String(status) };
  if (status === 500) {
    return /context|too long|input/i.test(body) ? { owner: 'request', commit: 'none', why: '500 naming the input' }
                                               : { owner: 'unknown', commit: 'unknown', why: 'bare 500' };
  }
  if (status === 408 || status === 409 || status >= 500) {
    return shouldRetry === 'false' ? { owner: 'quota', commit: 'none', why: `${status}, x-should-retry false` }
                                   : { owner: 'transient', commit: 'none', retryAfterMs: ra, why: String(status) };
  }
  if (/content.?(filter|policy)|refus|safety/i.test(body)) return { owner: 'policy', commit: 'none', why: String(status) };
  return { owner: 'request', commit: 'none', why: String(status) };
}

// A transport failure (no HTTP error answer): what the attempt's state and the cause chain say.
function classifyTransport(err, { opened, visible }) {
  // Anything thrown while a stream was open (undici's "terminated" on a cut) is the stream breaking.
  if (opened) return streamed(err?.message ?? 'stream broke', visible);
  const codes = causeCodes(err);
  if (codes.includes('ECONNREFUSED')) return { owner: 'transient', commit: 'none', why: 'refused' };
  // A reset right after the request: nothing was answered and the server said so (RST). Any other
  // close before a response byte (a silent hold that ended) leaves the commit state unknown.
  if (codes.includes('ECONNRESET')) return { owner: 'transient', commit: 'none', why: 'reset before any byte' };
  return SILENT(err?.message ?? String(err));
}

// The Stainless SDKs' error classes (openai, @anthropic-ai/sdk).
export function classify(sdk, err, { opened, visible }) {
  if (err instanceof ContentFiltered) return { owner: 'policy', commit: 'none', why: err.message };
  if (err instanceof TruncatedStream) return streamed('stream ended early', visible);
  if (err instanceof sdk.APIUserAbortError) {
    // Our own idle timer. Before the headers nothing says whether the provider ran the call.
    return opened ? streamed('stream idle timeout', visible) : SILENT('no headers in time');
  }
  if (err instanceof sdk.APIConnectionTimeoutError) return SILENT('timeout before headers');
  if (err instanceof sdk.APIConnectionError) return classifyTransport(err, { opened: false, visible });
  if (err instanceof sdk.APIError) {
    if (err.status === undefined) return streamed('error event in the stream', visible);  // after a 200
    return classifyStatus({
      status: err.status,
      header: (k) => err.headers?.get?.(k) ?? null,
      body: JSON.stringify(err.error ?? {}) + ' ' + (err.message ?? ''),
      code: err.code === 'insufficient_quota' || err.type === 'insufficient_quota' ? 'insufficient_quota' : err.code,
    });
  }
  return classifyTransport(err, { opened, visible });
}

// Any other library (runPolicy with headerTimeout): `facts(err)` -> {status, body, code} of an HTTP error
// answer the library wrapped its own way, or undefined; the response headers come from runPolicy's fetch
// (state.response) when the library's error drops them.
export function classifyWith(facts) {
  return (err, st) => {
    if (err instanceof ContentFiltered) return { owner: 'policy', commit: 'none', why: err.message };
    if (err instanceof TruncatedStream) return streamed('stream ended early', st.visible);
    const answered = st.response?.status === 200;  // the HTTP answer was a 200: what broke is its body
    if (st.idleAborted) return st.opened || answered ? streamed('idle timeout after the headers', st.visible) : SILENT('no headers in time');
    if (st.headerTimedOut) return SILENT('timeout before headers');
    const f = facts(err);
    // An error status the library read from inside a 200's body (genai turns a stream's error event into
    // an ApiError 503) is a broken stream, not an HTTP error answer: what was visible decides.
    if (f && Number.isInteger(f.status) && f.status >= 400 && !answered) {
      const fromResponse = st.response && st.response.status === f.status ? st.response.headers : undefined;
      return classifyStatus({ ...f, header: (k) => fromResponse?.get?.(k) ?? f.header?.(k) ?? null });
    }
    // A 200 whose body broke (a plain answer is visible only when whole; a stream's visible text counts).
    return classifyTransport(err, { opened: st.opened || answered, visible: st.visible });
  };
}

function retryAfterMs(h) {
  const ms = parseFloat(h('retry-after-ms') ?? h('x-amz-retry-after') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const s = h('retry-after');
  if (s === null) return undefined;
  const secs = parseFloat(s);
  if (Number.isFinite(secs)) return secs * 1000;
  const date = Date.parse(s);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

// The team's policy loop (the decisions above), for any client library: `routes` in the order the
// policy tries them, `attempt(route, hooks)` makes one call without retries of its own and returns
// {text, model, output_tokens}, `classify(err, state)` maps its error to {owner, commit, retryAfterMs, why}.
// hooks: `signal` (the idle timer's abort), `onOpen` / `onText` (a stream's headers / visible text: they
// re-arm the idle timer), `timeoutMs` (the scaled attempt timeout, to give the library), `fetch` (the
// global fetch, timed: the request's budget starts at its first send; with `headerTimeout` it also
// aborts when no response headers arrive within the attempt timeout, and it records the last response's
// status and headers in `state.response` for libraries whose errors drop them).
// state (per attempt): {opened, visible, idleAborted, headerTimedOut, bodyBroken, response}. bodyBroken:
// the response body failed to read to its end (a cut, a reset): the connection, not the library, says so,
// and a body that ended cleanly is whole even without its dialect's last event (SPEC: no_terminator).
export async function runPolicy({ routes, attempt, classify, headerTimeout = false }) {
  const env = readEnv();
  const p = budgetOf(env.policy, env.timeScale);
  routes = routes.filter((r, k) => k === 0 || p.approved(r.name));  // an unapproved fallback is never tried
  // A service that has run for a while has its HTTP stack loaded; a fresh node process loads undici on
  // its first fetch (100+ ms on a loaded machine). Do that before the first attempt's clock starts.
  await fetch('data:text/plain,warm-up').then((r) => r.text()).catch(() => {});
  if (routes.length === 0) throw new Error('no route of this case speaks a dialect this client has');
  const run = { idx: 0, attempts: 0, retriesOnRoute: 0, started: undefined, state: undefined };
  const timedFetch = timedFetchOf(p, run, headerTimeout);
  while (true) {
    const route = routes[run.idx];
    run.attempts += 1;
    const ended = await oneAttempt(p, run, route, attempt, timedFetch);
    if (ended.answer) {
      const outcome = run.idx > 0 ? 'fallback_recovery' : run.attempts > 1 ? 'retry_recovery' : 'primary_success';
      report(outcome, { route: route.name, ...ended.answer });
      return;
    }
    let c = classify(ended.err, ended.state);
    if (c.silent && p.replaySafe) c = { owner: 'transient', commit: 'none', why: `${c.why}, replay-safe` };
    console.error(`${route.name} attempt ${run.attempts}: ${describe(ended.err)} -> owner ${c.owner}, commit ${c.commit} (${c.why})`);
    const next = nextStep(p, run, routes, c);
    if (next.fail) return failClosed(next.fail);
    if (next.waitMs !== undefined) {
      console.error(`retry on ${route.name} in ${Math.round(next.waitMs)} ms`);
      run.retriesOnRoute += 1;
      await sleep(next.waitMs);
    } else {
      run.idx += 1;
      run.retriesOnRoute = 0;
      console.error(`fall back to ${routes[run.idx].name}`);
    }
  }
}

// The global fetch, timed: the request's time budget runs from its first send, as the harness measures
// it (first arrival at the mock): a fresh node process spends a while in the client library before that
// (a long-lived service does not). `run.state` is the current attempt's state.
function timedFetchOf(p, run, headerTimeout) {
  return async (url, init = {}) => {
    run.started ??= Date.now();
    const s = run.state;
    let timer;
    let signal = init.signal;
    if (headerTimeout) {
      const ctl = new AbortController();
      timer = setTimeout(() => { s.headerTimedOut = true; ctl.abort(new Error('no response headers in time')); }, p.attemptTimeoutMs);
      signal = signal ? AbortSignal.any([signal, ctl.signal]) : ctl.signal;
    }
    try {
      const res = await fetch(url, { ...init, signal });
      s.response = { status: res.status, headers: res.headers };
      // A plain answer's body is bounded like a stream's gaps: the idle timer runs from the headers.
      if (headerTimeout) s.onHeaders?.();
      return watchBody(res, () => { s.bodyBroken = true; });
    } finally {
      clearTimeout(timer);
    }
  };
}

// One attempt on `route`: {answer} when it succeeded, else {err, state}.
async function oneAttempt(p, run, route, attempt, timedFetch) {
  const st = { opened: false, visible: 0, idleAborted: false, headerTimedOut: false, bodyBroken: false, response: undefined };
  run.state = st;
  // The idle gaps of an open stream are this timer's (armed at the headers, re-armed at every
  // visible token); the time to the headers is the library's timeout or timedFetch's.
  const ctl = new AbortController();
  let timer;
  const touch = () => {
    clearTimeout(timer);
    timer = setTimeout(() => { st.idleAborted = true; ctl.abort(); }, p.attemptTimeoutMs);
  };
  st.onHeaders = touch;
  try {
    const answer = await attempt(route, {
      signal: ctl.signal,
      timeoutMs: p.attemptTimeoutMs,
      fetch: timedFetch,
      onOpen: () => { st.opened = true; touch(); },
      onText: (t) => { st.visible += t.length; touch(); },
    });
    clearTimeout(timer);
    // A library that ends a broken body quietly (a cut read as the end) returned a truncated answer.
    if (st.bodyBroken) throw new TruncatedStream(st.visible);
    // An answer the provider ended for its content policy (finish reason content_filter, refusal, SAFETY).
    if (answer.filtered) throw new ContentFiltered(answer.finish_reason);
    return { answer };
  } catch (err) {
    clearTimeout(timer);
    // Hang up on the failed attempt before anything else: a library that stops reading a broken stream
    // may leave its connection open (the AI SDK's tee'd streams do), and the provider would go on
    // generating (and billing) an answer nobody reads.
    ctl.abort();
    return { err, state: st };
  }
}

// The policy's decision after a classified failure: {fail: why}, {waitMs} (retry on the same route) or
// {} (fall back to the next route).
function nextStep(p, run, routes, c) {
  if (['request', 'auth', 'policy'].includes(c.owner)) return { fail: `owner ${c.owner}` };
  if (c.commit !== 'none') return { fail: `commit ${c.commit}` };
  if (c.owner === 'unknown') return { fail: 'owner unknown, no queue' };
  const left = p.maxAttempts - run.attempts;
  const timeLeft = p.sloMs - (Date.now() - (run.started ?? Date.now()));
  const route = routes[run.idx];
  if (left > 0 && (c.owner === 'transient' || c.owner === 'rate')) {
    const backoff = Math.random() * Math.min(p.backoffCapMs, p.backoffBaseMs * 2 ** run.retriesOnRoute);
    const waitMs = Math.max(c.retryAfterMs ?? 0, backoff);
    if (timeLeft >= waitMs + p.expectedLatencyMs(route.name)) return { waitMs };
  }
  if (left > 0 && run.idx + 1 < routes.length && timeLeft >= p.expectedLatencyMs(routes[run.idx + 1].name)) return {};
  return { fail: left > 0 ? 'no route or time left' : 'attempts exhausted' };
}

function failClosed(why) {
  console.error(`fail closed: ${why}`);
  report('fail_closed', { text: '' });
  process.exitCode = 1;
}

// The response with its body read through a pass-through that calls onBroken when the body fails to
// read to its end (the library still sees the same bytes and the same error).
function watchBody(res, onBroken) {
  if (!res.body) return res;
  const reader = res.body.getReader();
  const body = new ReadableStream({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      } catch (err) {
        onBroken();
        controller.error(err);
      }
    },
    cancel(reason) { return reader.cancel(reason); },
  });
  return new Response(body, { status: res.status, statusText: res.statusText, headers: res.headers });
}

// The Stainless-generated SDKs (openai, @anthropic-ai/sdk): one client per route, the SDK's `timeout`
// to the response headers, its error classes (classify above).
export async function runHardened({ dialect, sdk, makeClient }) {
  const env = readEnv();
  // Only routes this SDK speaks: a fallback of another dialect would need another SDK.
  const routes = [env.primary, ...env.fallbacks].filter((r) => r.dialect === dialect);
  const clients = new Map();
  await runPolicy({
    routes,
    classify: (err, st) => classify(sdk, err, st),
    attempt: (route, { signal, onOpen, onText, timeoutMs, fetch }) => {
      if (!clients.has(route.name)) clients.set(route.name, makeClient(route, env, { maxRetries: 0, timeout: timeoutMs, fetch }));
      return chat(dialect, clients.get(route.name), env.request, { signal, onOpen, onText });
    },
  });
}
