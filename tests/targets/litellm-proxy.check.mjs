// Asserts the verdicts target_litellm_proxy expects of the LiteLLM proxy (run-litellm-proxy-test.sh),
// each as the full run showed it (examples/README.md).
//   node tests/targets/litellm-proxy.check.mjs REPORT.json
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

const report = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const bySlug = Object.fromEntries(report.cases.map((c) => [basename(c.file, '.toml'), c]));
const failed = (c) => (c.checks ?? []).filter((k) => !k.ok).map((k) => k.name);
const expect = {
  // Answered whole from the primary, but `model` restamped to the requested "mock-model".
  'ok-streamed': (c) => c.verdict === 'fail' && c.attempts_by_route.primary === 1 &&
    failed(c).join() === 'names_serving_route',
  // The Router falls back on any error, a 401 too.
  'auth-401-fails-closed': (c) => c.verdict === 'fail' && c.observed === 'fallback' && c.attempts_by_route.backup === 1,
  'rate-429-retried': (c) => c.verdict === 'pass' && c.observed === 'retry',
  'server-500-queued': (c) => c.verdict === 'n/a' && c.reason.startsWith('needs capability queue'),
};
let bad = 0;
for (const [slug, ok] of Object.entries(expect)) {
  const c = bySlug[slug];
  const line = c ? `${c.verdict} ${c.observed} ${JSON.stringify(c.attempts_by_route)} ${failed(c).join(',')} ${c.reason || c.unknown_reason || ''}` : 'not run';
  const good = c && ok(c);
  if (!good) ++bad;
  console.log(`${good ? 'ok  ' : 'BAD '} ${slug}: ${line}`);
}
if (!report.label.startsWith('litellm-proxy ')) { ++bad; console.log(`BAD  label: ${report.label}`); }
console.log(`litellm-proxy.check: ${Object.keys(expect).length + 1 - bad} passed, ${bad} failed`);
process.exit(bad ? 1 : 0);
