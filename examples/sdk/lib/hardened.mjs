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
// `x-should-retry: false`) is never retried on the same route.
// The budget is the team's policy (examples/cases/policies/sdk.toml says the same), times
// LLMCHAOS_SDK_TIME_SCALE.
import { setTimeout as sleep } from 'node:timers/promises';
import { TruncatedStream, causeCodes, chat, describe, readEnv, report } from './common.mjs';

export const POLICY = {
  maxAttempts: 2,          // per request, every route and every layer (the SDK makes none of its own)
  sloMs: 8000,             // the request's time budget
  attemptTimeoutMs: 2000,  // to the response headers, and between two stream events
  expectedLatencyMs: 300,  // what one more attempt is expected to take
  backoffBaseMs: 200,      // exponential, full jitter
  backoffCapMs: 2000,
};

const ATTEMPT_TIMEOUT_FLOOR_MS = 2000;
const QUOTA_TEXT = /insufficient_quota|quota|billing|credit/i;

// -> { owner: 'transient'|'rate'|'quota'|'request'|'auth'|'policy'|'unknown', commit: 'none'|'committed'|'unknown', retryAfterMs }
export function classify(sdk, err, { opened, visible }) {
  const streamed = (what) => visible > 0 ? { owner: 'transient', commit: 'committed', why: what }
                                         : { owner: 'transient', commit: 'none', why: what };
  if (err instanceof TruncatedStream) return streamed('stream ended early');
  if (err instanceof sdk.APIUserAbortError) {
    // Our own idle timer. Before the headers nothing says whether the provider ran the call.
    return opened ? streamed('stream idle timeout') : { owner: 'unknown', commit: 'unknown', why: 'no headers in time' };
  }
  if (err instanceof sdk.APIConnectionTimeoutError) return { owner: 'unknown', commit: 'unknown', why: 'timeout before headers' };
  if (err instanceof sdk.APIConnectionError) {
    const codes = causeCodes(err);
    if (codes.includes('ECONNREFUSED')) return { owner: 'transient', commit: 'none', why: 'refused' };
    // A reset right after the request: nothing was answered and the server said so (RST). Any other
    // close before a response byte (a silent hold that ended) leaves the commit state unknown.
    if (codes.includes('ECONNRESET')) return { owner: 'transient', commit: 'none', why: 'reset before any byte' };
    return { owner: 'unknown', commit: 'unknown', why: 'connection closed before headers' };
  }
  if (err instanceof sdk.APIError) {
    const status = err.status;
    if (status === undefined) return streamed('error event in the stream');  // after a 200
    const shouldRetry = err.headers?.get?.('x-should-retry');
    const body = JSON.stringify(err.error ?? {}) + ' ' + (err.message ?? '');
    const ra = retryAfterMs(err.headers);
    if (status === 402) return { owner: 'quota', commit: 'none', why: '402' };
    if (status === 429) {
      const quota = err.code === 'insufficient_quota' || err.type === 'insufficient_quota' || QUOTA_TEXT.test(body) || shouldRetry === 'false';
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
    if (/content.?(filter|policy)|refus/i.test(body)) return { owner: 'policy', commit: 'none', why: String(status) };
    return { owner: 'request', commit: 'none', why: String(status) };
  }
  // Anything else thrown while a stream was open (undici's "terminated" on a cut) is the stream breaking.
  if (opened) return streamed(err?.message ?? 'stream broke');
  return { owner: 'unknown', commit: 'unknown', why: err?.message ?? String(err) };
}

function retryAfterMs(headers) {
  const h = (k) => headers?.get?.(k) ?? null;
  const ms = parseFloat(h('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const s = h('retry-after');
  if (s === null) return undefined;
  const secs = parseFloat(s);
  if (Number.isFinite(secs)) return secs * 1000;
  const date = Date.parse(s);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

export async function runHardened({ dialect, sdk, makeClient }) {
  const env = readEnv();
  const scale = env.timeScale;
  const p = Object.fromEntries(Object.entries(POLICY).map(([k, v]) => [k, k === 'maxAttempts' ? v : v * scale]));
  // Under a small --time-scale the scaled attempt timeout would be shorter than a busy machine (other
  // builds on 2 cores) takes to answer over loopback: keep a floor of 2 s real.
  p.attemptTimeoutMs = Math.max(p.attemptTimeoutMs, ATTEMPT_TIMEOUT_FLOOR_MS);
  // A service that has run for a while has its HTTP stack loaded; a fresh node process loads undici on
  // its first fetch (100+ ms on a loaded machine). Do that before the first attempt's clock starts.
  await fetch('data:text/plain,warm-up').then((r) => r.text()).catch(() => {});
  // Only routes this SDK speaks: a fallback of another dialect would need another SDK.
  const routes = [env.primary, ...env.fallbacks].filter((r) => r.dialect === dialect);
  const clients = new Map();
  const clientFor = (route) => {
    if (!clients.has(route.name)) clients.set(route.name, makeClient(route, env, { maxRetries: 0, timeout: p.attemptTimeoutMs, fetch: timedFetch }));
    return clients.get(route.name);
  };
  // The request's time budget runs from its first send, as the harness measures it (first arrival at
  // the mock): a fresh node process spends a while in the SDK before that (a long-lived service does not).
  let started;
  const timedFetch = (...args) => {
    started ??= Date.now();
    return fetch(...args);
  };
  let idx = 0, attempts = 0, retriesOnRoute = 0;
  const fail = (why) => {
    console.error(`fail closed: ${why}`);
    report('fail_closed', { text: '' });
    process.exitCode = 1;
  };
  while (true) {
    const route = routes[idx];
    attempts += 1;
    let opened = false, visible = 0;
    // Time to the headers is the SDK's `timeout` (armed right before its fetch); the idle gaps of an
    // open stream are this timer's (armed at the headers, re-armed at every visible token).
    const ctl = new AbortController();
    let timer;
    const touch = () => { clearTimeout(timer); timer = setTimeout(() => ctl.abort(), p.attemptTimeoutMs); };
    try {
      const answer = await chat(dialect, clientFor(route), env.request, {
        signal: ctl.signal,
        onOpen: () => { opened = true; touch(); },
        onText: (t) => { visible += t.length; touch(); },
      });
      clearTimeout(timer);
      const outcome = idx > 0 ? 'fallback_recovery' : attempts > 1 ? 'retry_recovery' : 'primary_success';
      report(outcome, { route: route.name, ...answer });
      return;
    } catch (err) {
      clearTimeout(timer);
      const c = classify(sdk, err, { opened, visible });
      console.error(`${route.name} attempt ${attempts}: ${describe(err)} -> owner ${c.owner}, commit ${c.commit} (${c.why})`);
      if (['request', 'auth', 'policy'].includes(c.owner)) return fail(`owner ${c.owner}`);
      if (c.commit !== 'none') return fail(`commit ${c.commit}`);
      if (c.owner === 'unknown') return fail('owner unknown, no queue');
      const left = p.maxAttempts - attempts;
      const timeLeft = p.sloMs - (Date.now() - (started ?? Date.now()));
      if (left > 0 && (c.owner === 'transient' || c.owner === 'rate')) {
        const backoff = Math.random() * Math.min(p.backoffCapMs, p.backoffBaseMs * 2 ** retriesOnRoute);
        const wait = Math.max(c.retryAfterMs ?? 0, backoff);
        if (timeLeft >= wait + p.expectedLatencyMs) {
          console.error(`retry on ${route.name} in ${Math.round(wait)} ms`);
          retriesOnRoute += 1;
          await sleep(wait);
          continue;
        }
      }
      if (left > 0 && idx + 1 < routes.length && timeLeft >= p.expectedLatencyMs) {
        idx += 1;
        retriesOnRoute = 0;
        console.error(`fall back to ${routes[idx].name}`);
        continue;
      }
      return fail(left > 0 ? 'no route or time left' : 'attempts exhausted');
    }
  }
}
