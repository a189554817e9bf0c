// Asserts the verdicts target_bedrock_suites expects of the Bedrock clients (run-bedrock-suites-test.sh),
// each as the full run showed it (examples/README.md, "Amazon Bedrock"), then that the findings table
// gives every failure a note (examples/targets/notes.json):
//   - boto3's default client takes a Converse body cut half-way as an empty success (1 attempt, FAIL
//     no_truncated_success); the Vercel AI SDK retries it, and so do both hardened clients;
//   - a ServiceQuotaExceededException (400) goes to the caller from both defaults (no fallback: FAIL) and
//     to the backup from both hardened clients (1 + 1);
//   - x-amz-retry-after 20 s: botocore waits it only up to its jittered backoff + 5 s (a retry 5 to 7 s
//     later), the AI SDK ignores it (its own 2 s backoff, under 4.5 s); the hardened clients fall back;
//   - an in-stream throttlingException before any token: never retried by either default (FAIL, 1
//     attempt), retried by both hardened clients.
//   node tests/targets/bedrock.check.mjs OUT
import { execFileSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { countBadVerdicts, failedChecks } from './check-verdicts.mjs';

const out = process.argv[2];
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const at = (c) => `${c.attempts_by_route.primary ?? 0}+${c.attempts_by_route.backup ?? 0}`;
const is = (verdict, observed, attempts) => (c) => c.verdict === verdict && c.observed === observed && at(c) === attempts;
const gapMs = (c) => c.ledger[1].received_at_ms - c.ledger[0].received_at_ms;
const hardened = {
  'stream-cut-plain-retried': is('pass', 'retry', '2+0'),
  'quota-400-falls-back': is('pass', 'fallback', '1+1'),
  'rate-429-long-retry-after-falls-back': is('pass', 'fallback', '1+1'),
  'stream-error-throttling-before-tokens-retried': is('pass', 'retry', '2+0'),
};
const expect = {
  'py-bedrock-boto3-default': {
    'stream-cut-plain-retried': (c) => is('fail', 'none', '1+0')(c) && failedChecks(c).includes('no_truncated_success'),
    'quota-400-falls-back': is('fail', 'fail_closed', '1+0'),
    'rate-429-long-retry-after-falls-back': (c) => is('fail', 'retry', '2+0')(c) && gapMs(c) >= 4900 && gapMs(c) < 7500,
    'stream-error-throttling-before-tokens-retried': is('fail', 'fail_closed', '1+0'),
  },
  'py-bedrock-boto3-hardened': hardened,
  'vercel-ai-bedrock-default': {
    'stream-cut-plain-retried': is('pass', 'retry', '2+0'),
    'quota-400-falls-back': is('fail', 'fail_closed', '1+0'),
    'rate-429-long-retry-after-falls-back': (c) => is('fail', 'retry', '2+0')(c) && gapMs(c) < 4500,
    'stream-error-throttling-before-tokens-retried': is('fail', 'fail_closed', '1+0'),
  },
  'vercel-ai-bedrock-hardened': hardened,
};
let bad = 0;
for (const [target, cases] of Object.entries(expect)) {
  console.log(`-- ${target}`);
  bad += countBadVerdicts(join(out, target, 'report.json'), `${target} (`, cases);
}
const table = execFileSync('node', [join(root, 'examples/targets/findings.mjs'), out, ...Object.keys(expect)], { encoding: 'utf8' });
const unexplained = table.split('\n').filter((l) => l.includes('**FAIL**') && !/\| real[:,]/.test(l));
for (const l of unexplained) console.log(`BAD  a failure without its note: ${l.slice(0, 160)}`);
bad += unexplained.length;
const failures = table.split('\n').filter((l) => l.includes('**FAIL**')).length;
console.log(`bedrock.check: ${failures} failure(s) in the tables, ${unexplained.length} without a note; ${bad} expectation(s) not met`);
process.exit(bad ? 1 : 0);
