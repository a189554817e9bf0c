// Asserts the verdicts target_framework_suites expects of the framework clients (run-framework-suites-test.sh),
// each a behaviour the full suites showed (examples/README.md, "Framework clients"):
//   - @google/genai retries nothing by default: a per-minute 429 goes to the caller after 1 attempt (FAIL);
//     the hardened genai client retries it after the hint (pass);
//   - the Vercel AI SDK retries every 429 without reading the body: a quota 429 is sent 3 times against a
//     budget of 2 and the healthy backup is never tried (FAIL); a rate 429 is retried (pass); the hardened
//     client goes to the backup after 1 attempt (pass);
//   - LangChain's default retry handler stops on `insufficient_quota`, and withFallbacks moves to the
//     backup (pass, 1 + 1 attempts), as does the hardened client.
//   - the hardened AI SDK and LangChain clients keep the case's own budget (LLMCHAOS_POLICY_JSON): a case
//     allowing 3 attempts has its 503 retried twice (pass, 3 attempts; a fixed budget of 2 fails it).
//   node tests/targets/frameworks.check.mjs OUT
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const out = process.argv[2];
const GEMINI_RATE = 'cases/faults/gemini/rate-429-streamed-retried.toml';
const QUOTA = 'examples/cases/openai/quota-429-falls-back.toml';
const THREE_ATTEMPTS = 'cases/faults/openai/overloaded-503-retried-twice.toml';
const retriedTwice = (c) => c.verdict === 'pass' && c.observed === 'retry' && at(c) === '3+0';
const at = (c) => `${c.attempts_by_route.primary ?? 0}+${c.attempts_by_route.backup ?? 0}`;
const expect = {
  'gemini-default': { [GEMINI_RATE]: (c) => c.verdict === 'fail' && c.observed === 'fail_closed' && at(c) === '1+0' },
  'gemini-hardened': { [GEMINI_RATE]: (c) => c.verdict === 'pass' && c.observed === 'retry' && at(c) === '2+0' },
  'vercel-ai-default': {
    [GEMINI_RATE]: (c) => c.verdict === 'pass' && c.observed === 'retry' && at(c) === '2+0',
    [QUOTA]: (c) => c.verdict === 'fail' && c.observed === 'retry' && at(c) === '3+0' &&
      c.checks.some((k) => k.name === 'max_total_attempts' && !k.ok),
  },
  'vercel-ai-hardened': {
    [GEMINI_RATE]: (c) => c.verdict === 'pass' && c.observed === 'retry' && at(c) === '2+0',
    [QUOTA]: (c) => c.verdict === 'pass' && c.observed === 'fallback' && at(c) === '1+1',
    [THREE_ATTEMPTS]: retriedTwice,
  },
  'langchain-default': { [QUOTA]: (c) => c.verdict === 'pass' && c.observed === 'fallback' && at(c) === '1+1' },
  'langchain-hardened': {
    [QUOTA]: (c) => c.verdict === 'pass' && c.observed === 'fallback' && at(c) === '1+1',
    [THREE_ATTEMPTS]: retriedTwice,
  },
};
let good = 0, bad = 0;
for (const [target, cases] of Object.entries(expect)) {
  const report = JSON.parse(readFileSync(join(out, target, 'report.json'), 'utf8'));
  if (!report.label.startsWith(`${target} (`)) { ++bad; console.log(`BAD  ${target}: label ${report.label}`); }
  for (const [file, ok] of Object.entries(cases)) {
    const c = report.cases.find((x) => x.file === file);
    const line = c ? `${c.verdict} ${c.observed} ${JSON.stringify(c.attempts_by_route)} ${c.unknown_reason || ''}` : 'not run';
    const pass = Boolean(c && ok(c));
    if (pass) ++good; else ++bad;
    console.log(`${pass ? 'ok  ' : 'BAD '} ${target} ${file}: ${line}`);
  }
}
console.log(`frameworks.check: ${good} passed, ${bad} failed`);
process.exit(bad ? 1 : 0);
