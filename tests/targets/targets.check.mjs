// Asserts the verdicts target_suites expects of the Portkey gateway (run-target-suites-test.sh).
//   node tests/targets/targets.check.mjs REPORT.json
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const bySlug = Object.fromEntries(report.cases.map((c) => [basename(c.file, '.toml'), c]));
const expect = {
  'ok-streamed': (c) => c.verdict === 'pass' && c.attempts_by_route.primary === 1,
  'auth-401-fails-closed': (c) => c.verdict === 'fail' && c.observed === 'fallback' && c.attempts_by_route.backup === 1,
  'rate-429-retried': (c) => c.verdict === 'pass' && c.observed === 'retry',
  'server-500-queued': (c) => c.verdict === 'n/a' && c.reason.startsWith('needs capability queue'),
};
let bad = 0;
for (const [slug, ok] of Object.entries(expect)) {
  const c = bySlug[slug];
  const line = c ? `${c.verdict} ${c.observed} ${JSON.stringify(c.attempts_by_route)} ${c.reason || c.unknown_reason || ''}` : 'not run';
  const good = c && ok(c);
  if (!good) ++bad;
  console.log(`${good ? 'ok  ' : 'BAD '} ${slug}: ${line}`);
}
if (!report.label.startsWith('portkey ')) { ++bad; console.log(`BAD  label: ${report.label}`); }
console.log(`targets.check: ${Object.keys(expect).length + 1 - bad} passed, ${bad} failed`);
process.exit(bad ? 1 : 0);
