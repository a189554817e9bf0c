// A small classification service with its own resilience code (the TypeScript twin of
// examples/apps/python/chat_service.py): the primary route first, retries for what clears by waiting,
// the fallback route for what does not. Plain fetch, no SDK. The retry rule is retry-rules.ts;
// retry-rules-before.ts has the quota bug (CHAT_SERVICE_RULES=before selects it; README.md).
import * as fixed from './retry-rules';
import * as before from './retry-rules-before';

const rules = process.env.CHAT_SERVICE_RULES === 'before' ? before : fixed;

export interface Route { name: string; baseUrl: string; dialect: string; model?: string }
export interface Seen { outcome: 'success' | 'error'; text?: string; route?: string; model?: string; output_tokens?: number }
export interface Budget { maxAttempts: number; deadlineMs: number; attemptTimeoutMs: number; requestId?: string }

class HttpFailure extends Error {
  constructor(readonly status: number, readonly body: string, readonly retryAfterS: number | null) {
    super(`HTTP ${status}`);
  }
}

async function post(url: string, body: unknown, headers: Record<string, string>, timeoutMs: number): Promise<any> {
  const answer = await fetch(url, {
    method: 'POST',
    body: JSON.stringify(body),
    headers: { 'content-type': 'application/json', ...headers },
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await answer.text();
  if (!answer.ok) {
    const after = answer.headers.get('retry-after');
    throw new HttpFailure(answer.status, text, after ? Number(after) : null);
  }
  return JSON.parse(text);
}

async function call(route: Route, prompt: string, b: Budget): Promise<{ text: string; model: string; tokens: number }> {
  const key: Record<string, string> = b.requestId ? { 'idempotency-key': b.requestId } : {};
  const model = route.model ?? 'gpt-mock';
  if (route.dialect === 'anthropic') {
    const got = await post(`${route.baseUrl}/v1/messages`,
      { model, max_tokens: 64, messages: [{ role: 'user', content: prompt }] },
      { 'x-api-key': 'sk-example', 'anthropic-version': '2023-06-01', ...key }, b.attemptTimeoutMs);
    return { text: (got.content ?? []).map((c: any) => c.text ?? '').join(''), model: got.model ?? '', tokens: got.usage?.output_tokens ?? 0 };
  }
  const got = await post(`${route.baseUrl}/chat/completions`,
    { model, messages: [{ role: 'user', content: prompt }] },
    { authorization: 'Bearer sk-example', ...key }, b.attemptTimeoutMs);
  return { text: got.choices[0].message.content ?? '', model: got.model ?? '', tokens: got.usage?.completion_tokens ?? 0 };
}

export async function classify(prompt: string, routes: Route[], b: Budget): Promise<Seen> {
  const start = Date.now();
  let attempts = 0;
  for (const route of routes) {
    while (attempts < b.maxAttempts) {
      attempts += 1;
      let failure: HttpFailure;
      try {
        const { text, model, tokens } = await call(route, prompt, b);
        return { outcome: 'success', text, route: route.name, model, output_tokens: tokens };
      } catch (e) {
        failure = e instanceof HttpFailure ? e : new HttpFailure(0, String(e), null);
      }
      const leftS = (b.deadlineMs - (Date.now() - start)) / 1000;
      const [action, waitS] = rules.decide(failure.status, failure.body, failure.retryAfterS, leftS);
      if (action === 'fail') return { outcome: 'error' };
      if (action === 'fallback') break;
      await new Promise((r) => setTimeout(r, waitS * 1000));
    }
  }
  return { outcome: 'error' };
}
