// llmchaostest/containers: the llmchaos image on testcontainers, judged through the helper's own objects.
// node.sh runs it with LLMCHAOS_DOCKER_IMAGE (the image under test) and LLMCHAOS_TEST_CASES (the
// example apps' cases folder: chat/*.toml and the policies/ they name).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, expect, test } from 'vitest';
import type { Case, Chaos, Seen } from 'llmchaostest';
import { LlmchaosContainer, startLlmchaosContainer, type StartedLlmchaosContainer } from 'llmchaostest/containers';

const cases = process.env.LLMCHAOS_TEST_CASES ?? '';
if (!existsSync(path.join(cases, 'chat', 'quota-429-falls-back.toml'))) throw new Error(`LLMCHAOS_TEST_CASES=${cases}: no chat/quota-429-falls-back.toml`);

async function chat(baseUrl: string, key: string): Promise<{ status: number; text: string; model?: string; tokens?: number }> {
  const answer = await fetch(`${baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test', 'idempotency-key': key },
    body: JSON.stringify({ model: 'mock-model', messages: [{ role: 'user', content: 'classify this' }] }),
  });
  const body = await answer.json().catch(() => ({}));
  return { status: answer.status, text: body?.choices?.[0]?.message?.content ?? '', model: body?.model, tokens: body?.usage?.completion_tokens };
}

// The code under test: a 429 is retried on its route (naive) or, being a quota refusal, sent to the next
// route (hardened). The chat cases' backup route is Anthropic: the hardened client asks it in its dialect.
async function client(c: Case, hardened: boolean): Promise<Seen> {
  const routes = c.routeOrder;
  for (let i = 0, attempts = 0; i < routes.length && attempts < 3; attempts++) {
    const route = routes[i];
    let status: number, text: string, model: string | undefined, tokens: number | undefined;
    if (c.dialect(route) === 'anthropic') {
      const answer = await fetch(`${c.baseUrl(route)}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': 'sk-test', 'anthropic-version': '2023-06-01', 'idempotency-key': c.operationId },
        body: JSON.stringify({ model: 'claude-mock', max_tokens: 16, messages: [{ role: 'user', content: 'classify this' }] }),
      });
      const body = await answer.json().catch(() => ({}));
      ({ status, text, model, tokens } = { status: answer.status, text: body?.content?.[0]?.text ?? '', model: body?.model, tokens: body?.usage?.output_tokens });
    } else {
      ({ status, text, model, tokens } = await chat(c.baseUrl(route), c.operationId));
    }
    if (status === 200) return { outcome: 'success', text, route, model, output_tokens: tokens };
    if (hardened || status !== 429) i++;
  }
  return { outcome: 'fail_closed' };
}

let chaos: Chaos;
beforeAll(async () => { chaos = await startLlmchaosContainer({ casesDir: cases, baseDir: cases }); });
afterAll(async () => { await chaos?.stop(); });

test('the hardened client passes the quota case (policy ../policies resolved inside /cases)', async () => {
  expect(chaos.token).toMatch(/^[0-9a-f]{32}$/);
  const verdict = await chaos.run('chat/quota-429-falls-back.toml', async (c) => {
    expect(c.baseUrl('primary').startsWith(chaos.url)).toBe(true);
    await c.finish(await client(c, true));
  });
  expect(verdict.verdict).toBe('pass');
});

test('the naive client fails the quota case, naming the failed check', async () => {
  await expect(chaos.run('chat/quota-429-falls-back.toml', async (c) => { await c.finish(await client(c, false)); }))
    .rejects.toThrow(/quota 429 goes to the fallback[\s\S]*check \w+ failed/);
});

test('reports are copied out of the container', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'llmchaos-reports-'));
  const result = await chaos.writeReports(dir);
  expect(result.written.map((f) => path.basename(f)).sort()).toEqual(['junit.xml', 'report.html', 'report.json', 'report.md']);
  expect(result.passed).toBe(1);
  expect(result.failed).toBe(1);
  expect(readFileSync(path.join(dir, 'junit.xml'), 'utf8')).toContain('quota 429 goes to the fallback');
});

test('a case outside the cases folder is sent as its text', async () => {
  const c = await chaos.caseText('name = "containers: healthy"\nexpect = "none"\nexpect_outcome = "primary_success"\n' +
    '[workflow]\nprimary = "primary"\nmax_total_attempts = 1\n[route.primary]\ndialect = "openai"\n');
  const { status, text } = await chat(c.baseUrl('primary'), c.operationId);
  expect(status).toBe(200);
  expect((await c.finish({ outcome: 'success', text, route: 'primary' })).verdict).toBe('pass');
  await c.end();
});

let started: StartedLlmchaosContainer;
test('the admin API refuses without the token; /__llmchaos/ready is open', async () => {
  started = await new LlmchaosContainer().withAdminToken('sesame-0123456789').start();
  const url = started.getBaseUrl();
  expect((await fetch(`${url}/__llmchaos/ready`)).status).toBe(200);
  const open = (token?: string) => fetch(`${url}/__llmchaos/sessions`, {
    method: 'POST', body: 'name = "x"\n',
    headers: { 'content-type': 'application/toml', ...(token ? { authorization: `Bearer ${token}` } : {}) },
  });
  expect((await open()).status).toBe(401);
  expect((await open('wrong')).status).toBe(401);
  const body = await (await open()).json();
  expect(typeof body.error).toBe('string');
  const own = started.chaos();
  const c = await own.caseText('name = "t"\nexpect = "none"\n[workflow]\nprimary = "p"\n[route.p]\ndialect = "openai"\n');
  expect(c.id).toBeTruthy();
  await c.end();
  // chaos.stop() stops and removes the container (Ryuk or not).
  const id = started.getId();
  await own.stop();
  expect(execFileSync('docker', ['ps', '-aq', '--no-trunc', '--filter', `id=${id}`], { encoding: 'utf8' }).trim()).toBe('');
}, 240000);
