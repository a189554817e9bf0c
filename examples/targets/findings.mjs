// Reads the JSON reports of `examples/run-target-suites` (OUT/<target>/report.json) and prints one
// findings table per target: case, expected, observed (the actions at the failure points and the
// outcome), verdict, and the ledger's evidence: every attempt the mock saw (route[attempt] fault
// status at ms), the foreign traffic apart.
// A target with notes in examples/targets/notes.json gets one more column on its failing rows: whether
// the failure is a real behaviour of the target or of the example client around it (written after
// reading the run's evidence; keys are case slugs as in the table, `*` matches any run of characters,
// the first matching key wins).
//   node examples/targets/findings.mjs OUT target...
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const NOTES = join(dirname(fileURLToPath(import.meta.url)), 'notes.json');
export function loadNotes() {
  return existsSync(NOTES) ? JSON.parse(readFileSync(NOTES, 'utf8')) : {};
}

function noteFor(notes, slug) {
  for (const [key, text] of Object.entries(notes ?? {})) {
    const re = new RegExp(`^${key.split('*').map((p) => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`);
    if (re.test(slug)) return text;
  }
  return '(no note)';
}

const ms = (x) => `${Math.round(x)} ms`;

// Times from the first attempt the mock saw (the gateway's own start-up is before it).
function evidence(c) {
  const t0 = (c.ledger ?? []).length ? c.ledger[0].received_at_ms : 0;
  // An attempt that lasted (a hold, a stall, a slow answer) also says until when and how it ended.
  const span = (e) => (e.finished_at_ms - e.received_at_ms > 500 ? ` until +${ms(e.finished_at_ms - t0)} (${e.outcome})` : '');
  const parts = (c.ledger ?? []).map((e) => `${e.route}[${e.attempt}] ${e.fault} ${e.status || 'none'} at +${ms(e.received_at_ms - t0)}${span(e)}`);
  let out = parts.length ? parts.join('; ') : 'no attempt';
  if ((c.foreign_traffic ?? []).length) out += `; foreign (not counted): ${c.foreign_traffic.map((e) => `${e.route} ${e.path}`).join(', ')}`;
  return out;
}

function verdict(c) {
  if (c.verdict === 'pass') return 'pass';
  if (c.verdict === 'n/a') return `n/a: ${c.reason}`;
  if (c.verdict === 'unknown') return `unknown: ${c.unknown_reason}`;
  const failed = (c.checks ?? []).filter((k) => !k.ok).map((k) => k.name);
  return `**FAIL**${c.reason ? ` (${c.reason})` : ''}: ${failed.join(', ')}`;
}

export function targetTable(name, report, notes) {
  const lines = [];
  lines.push(`### ${report.label || name}`);
  lines.push('');
  const t = report.totals;
  lines.push(`${t.passed}/${t.cases} pass, ${t.failed} fail, ${t.unknown} unknown, ${t.not_applicable ?? 0} n/a; ` +
             `driver ${report.driver}, time scale ${report.time_scale}, ${report.started_at}.`);
  for (const w of report.warnings ?? []) lines.push(`Warning: ${w}`);
  lines.push('');
  const noted = notes && Object.keys(notes).length > 0;
  lines.push(`| case | expected | observed | verdict | ledger evidence |${noted ? ' real behaviour of the target? |' : ''}`);
  lines.push(`|---|---|---|---|---|${noted ? '---|' : ''}`);
  for (const c of [...report.cases].sort((a, b) => a.file.localeCompare(b.file))) {
    const slug = c.file.replace(/^cases\/faults\//, '').replace(/^examples\/cases\//, 'sdk suite: ').replace(/\.toml$/, '');
    const expected = `${c.expected}${c.expected_outcome ? ` -> ${c.expected_outcome}` : ''}`;
    const actions = (c.observed_actions ?? []).length ? c.observed_actions.join(' > ') : 'none';
    const observed = c.verdict === 'n/a' ? '-' : `${actions} -> ${c.observed_outcome ?? '-'}`;
    const note = noted ? ` ${c.verdict === 'fail' || c.verdict === 'unknown' ? noteFor(notes, slug) : '-'} |` : '';
    lines.push(`| ${slug} | ${expected} | ${observed} | ${verdict(c)} | ${c.verdict === 'n/a' ? '-' : evidence(c)} |${note}`);
  }
  return lines.join('\n');
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [out, ...targets] = process.argv.slice(2);
  const notes = loadNotes();
  const tables = targets.map((t) => targetTable(t, JSON.parse(readFileSync(join(out, t, 'report.json'), 'utf8')), notes[t]));
  process.stdout.write(`${tables.join('\n\n')}\n`);
}
