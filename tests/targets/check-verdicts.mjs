// The shared body of the target tests' verdict checks: each expectation a predicate over one case of
// the run's report.json (found by its file's slug), the report's label checked for the target's name.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';

export const failedChecks = (c) => (c.checks ?? []).filter((k) => !k.ok).map((k) => k.name);

// Prints one line per expectation and exits 1 when any is not met.
export function checkVerdicts(name, reportPath, labelPrefix, expect) {
  const bad = countBadVerdicts(reportPath, labelPrefix, expect);
  console.log(`${name}: ${Object.keys(expect).length + 1 - bad} passed, ${bad} failed`);
  process.exit(bad ? 1 : 0);
}

// Prints one line per expectation (and the label's); returns how many were not met.
export function countBadVerdicts(reportPath, labelPrefix, expect) {
  const report = JSON.parse(readFileSync(reportPath, 'utf8'));
  const bySlug = Object.fromEntries(report.cases.map((c) => [basename(c.file, '.toml'), c]));
  let bad = 0;
  for (const [slug, ok] of Object.entries(expect)) {
    const c = bySlug[slug];
    const line = c
      ? `${c.verdict} ${c.observed} ${JSON.stringify(c.attempts_by_route)} ${failedChecks(c).join(',')} ${c.reason || c.unknown_reason || ''}`
      : 'not run';
    const good = c && ok(c);
    if (!good) ++bad;
    console.log(`${good ? 'ok  ' : 'BAD '} ${slug}: ${line}`);
  }
  if (!report.label.startsWith(labelPrefix)) { ++bad; console.log(`BAD  label: ${report.label}`); }
  return bad;
}
