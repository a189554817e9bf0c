// llmchaostest under Jest (CommonJS, no transform): one server for this file, the bundled quota case,
// a tiny client that falls back (pass) and one that retries the quota 429 (CaseFailed naming the check).
const path = require('node:path');
const { startLlmchaos, CaseFailed } = require('llmchaostest');

const quotaCase = path.resolve(process.env.LLMCHAOS_CASES, 'quota-429-falls-back.toml');
let chaos;
beforeAll(async () => { chaos = await startLlmchaos(); });
afterAll(async () => { await chaos.stop(); });

async function chat(c, route) {
  const headers = { 'content-type': 'application/json', 'idempotency-key': c.operationId };
  const body = { model: 'm', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
  const url = c.dialect(route) === 'anthropic' ? `${c.baseUrl(route)}/v1/messages` : `${c.baseUrl(route)}/chat/completions`;
  if (c.dialect(route) === 'anthropic') Object.assign(headers, { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' });
  else headers.authorization = 'Bearer k';
  const answer = await fetch(url, { method: 'POST', headers, body: JSON.stringify(body) });
  const json = await answer.json();
  const text = json.content ? json.content.map((b) => b.text).join('') : json.choices?.[0]?.message?.content;
  const tokens = json.usage ? (json.usage.output_tokens ?? json.usage.completion_tokens) : 0;
  return { status: answer.status, seen: { outcome: 'success', route, text, model: json.model, output_tokens: tokens } };
}

test('a client that falls back on the quota 429 passes', async () => {
  const verdict = await chaos.run(quotaCase, async (c) => {
    expect((await chat(c, 'primary')).status).toBe(429);
    await c.finish((await chat(c, 'backup')).seen);
  });
  expect(verdict.verdict).toBe('pass');
  expect(verdict.observed).toBe('fallback');
});

test('a client that retries the quota 429 fails with the checker\'s messages', async () => {
  const attempt = chaos.run(quotaCase, async (c) => {
    await chat(c, 'primary');
    await c.finish((await chat(c, 'primary')).seen);
  });
  await expect(attempt).rejects.toThrow(CaseFailed);
  await expect(attempt).rejects.toThrow(/check no_hammering failed/);
});
