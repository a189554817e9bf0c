// Reads the JSON reports of `examples/run-sdk-suites` (OUT/<client>/report.json) and prints the
// findings table: case x client -> verdict, the actions the ledger shows, attempts per route.
//   node examples/sdk/lib/findings.mjs OUT client...
import { readFileSync } from 'node:fs';
import { basename, dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function loadReports(out, clients) {
  const reports = {};
  for (const c of clients) reports[c] = JSON.parse(readFileSync(join(out, c, 'report.json'), 'utf8'));
  return reports;
}

export const slug = (file) => basename(file, '.toml');

function attempts(c) {
  const a = c.attempts_by_route ?? {};
  return Object.keys(a).sort((x, y) => (x === 'primary' ? -1 : y === 'primary' ? 1 : x.localeCompare(y)))
    .map((r) => `${r} ${a[r]}`).join(', ');
}

function cell(c) {
  if (!c) return '-';
  const verdict = c.verdict === 'unknown' ? `unknown: ${c.unknown_reason}` : c.verdict === 'pass' ? 'pass' : '**FAIL**';
  const actions = (c.observed_actions ?? []).length ? c.observed_actions.join(' > ') : 'none';
  return `${verdict}: ${actions} (${attempts(c)})`;
}

export function findingsMarkdown(reports) {
  const clients = Object.keys(reports);
  const rows = new Map();  // slug -> {expected, byClient}
  for (const client of clients) {
    for (const c of reports[client].cases) {
      const s = slug(c.file);
      if (!rows.has(s)) rows.set(s, { expected: c, byClient: {} });
      rows.get(s).byClient[client] = c;
    }
  }
  const expectCell = (c) => {
    const at = Object.entries(expectedAttempts(c)).map(([r, n]) => `${r} ${n}`).join(', ');
    return `${c.expected}${c.expected_outcome ? ` -> ${c.expected_outcome}` : ''}${at ? ` (${at})` : ''}`;
  };
  const lines = [];
  lines.push(`| case | expected | ${clients.join(' | ')} |`);
  lines.push(`|---|---|${clients.map(() => '---').join('|')}|`);
  for (const [s, row] of rows) lines.push(`| ${s} | ${expectCell(row.expected)} | ${clients.map((cl) => cell(row.byClient[cl])).join(' | ')} |`);
  lines.push('');
  lines.push(`| totals | | ${clients.map((cl) => {
    const t = reports[cl].totals;
    return `${t.passed}/${t.cases} pass`;
  }).join(' | ')} |`);
  lines.push('');
  lines.push('Failed checks (what the harness said):');
  lines.push('');
  for (const [s, row] of rows) {
    for (const cl of clients) {
      const c = row.byClient[cl];
      if (!c || c.verdict === 'pass') continue;
      const failed = (c.checks ?? []).filter((k) => !k.ok).map((k) => k.name);
      const why = (c.checks ?? []).filter((k) => !k.ok && ['max_total_attempts', 'no_duplicate_commit', 'no_truncated_success'].includes(k.name))
        .map((k) => k.message);
      lines.push(`- ${s} / ${cl}: ${failed.join(', ')}${c.unknown_reason ? ` (${c.unknown_reason})` : ''}${why.length ? `: ${why.join('; ')}` : ''}`);
    }
  }
  return lines.join('\n');
}

// expect_attempts is not in the report: read it from the case file (paths are relative to the checkout).
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
function expectedAttempts(c) {
  let text = '';
  try { text = readFileSync(isAbsolute(c.file) ? c.file : join(root, c.file), 'utf8'); } catch { return {}; }
  const m = /^expect_attempts\s*=\s*\{([^}]*)\}/m.exec(text);
  if (!m) return {};
  return Object.fromEntries(m[1].split(',').map((kv) => kv.split('=').map((x) => x.trim())).filter((kv) => kv.length === 2));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const [out, ...clients] = process.argv.slice(2);
  process.stdout.write(`${findingsMarkdown(loadReports(out, clients))}\n`);
}
