// Writes a target's findings table (findings.mjs over OUT/<target>/report.json, headed by the report's
// label, with the target's notes from notes.json) into examples/README.md between the markers
// `<!-- target-table:TARGET begin -->` and `<!-- target-table:TARGET end -->` (one pair per target).
//   node examples/targets/readme-table.mjs OUT TARGET...
// (examples/python/readme-tables.py does the same for the Python targets, between its own markers.)
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadNotes, targetTable } from './findings.mjs';

const README = join(dirname(fileURLToPath(import.meta.url)), '..', 'README.md');
const [out, ...targets] = process.argv.slice(2);
if (!out || !targets.length) {
  console.error('usage: node examples/targets/readme-table.mjs OUT TARGET...');
  process.exit(2);
}
const notes = loadNotes();
let text = readFileSync(README, 'utf8');
for (const t of targets) {
  const begin = `<!-- target-table:${t} begin -->`, end = `<!-- target-table:${t} end -->`;
  const [head, rest] = text.split(begin);
  if (rest === undefined || !rest.includes(end)) {
    console.error(`readme-table: ${README}: the markers ${begin} / ${end} are missing`);
    process.exit(2);
  }
  const table = targetTable(t, JSON.parse(readFileSync(join(out, t, 'report.json'), 'utf8')), notes[t])
    .replace(/^### /m, '#### ');
  text = `${head}${begin}\n\n${table}\n\n${end}${rest.slice(rest.indexOf(end) + end.length)}`;
}
writeFileSync(README, text);
console.log(`readme-table: ${targets.length} table(s) written into examples/README.md`);
