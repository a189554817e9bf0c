// chat-service's retry and fallback code under every case of examples/apps/cases/chat, judged by llmchaos.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startLlmchaos, type Case, type Chaos } from 'llmchaostest';
import { classify, type Route } from '../chat-service';

const casesDir = path.resolve(__dirname, '../../cases/chat');
let chaos: Chaos;

// casesDir: what a container (LLMCHAOS_DOCKER_IMAGE) sees at /cases: the cases and the policies they name.
beforeAll(async () => { chaos = await startLlmchaos({ baseDir: casesDir, casesDir: path.dirname(casesDir) }); });
afterAll(async () => {
  if (process.env.LLMCHAOS_REPORT_DIR) await chaos?.writeReports(process.env.LLMCHAOS_REPORT_DIR);
  await chaos?.stop();
});

function serviceRoutes(c: Case): Route[] {
  return c.routeOrder.map((name) => ({ name, baseUrl: c.baseUrl(name), dialect: c.dialect(name) }));
}

const cases = readdirSync(casesDir).filter((f) => f.endsWith('.toml')).sort();

function classifyAsConfigured(c: Case, requestId: string) {
  const w = c.policy.workflow ?? {};
  return classify(c.request.prompt ?? 'Label: the service is great', serviceRoutes(c), {
    maxAttempts: w.max_total_attempts, deadlineMs: w.max_elapsed_ms, attemptTimeoutMs: w.attempt_timeout_ms, requestId,
  });
}

test.each(cases)('%s', async (file) => {
  await chaos.run(file, async (c) => {
    const seen = [await classifyAsConfigured(c, c.operationId)];
    // the case checks the service still answers once the routes are healthy
    if (c.aliveAfter) seen.push(await classifyAsConfigured(c, await c.alive()));
    await c.finish(seen);
  });
});

test('a quota 429 goes to the fallback (the verdict itself)', async () => {
  const c = await chaos.case('quota-429-falls-back.toml');
  try {
    const seen = await classify('Label: fine', serviceRoutes(c), { maxAttempts: 3, deadlineMs: 8000, attemptTimeoutMs: 2000, requestId: c.operationId });
    const verdict = await c.finish(seen);
    expect(seen.route).toBe('backup');
    expect(verdict.observed).toBe('fallback');
  } finally {
    await c.end();
  }
});
