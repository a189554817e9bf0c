// Prints the case files a client that speaks the given dialects can be judged on: the primary route
// speaks one of them, and every route of another dialect is one the case expects no attempt on
// (`expect_attempts`: 0). A client that cannot speak a route the case falls back to would fail for a
// reason that is its example's, not the library's.
// With --every: only the cases whose every route speaks one of them (a gateway template that maps only
// those dialects).
//   node examples/targets/select-cases.mjs [--every] openai,anthropic FILE...
import { readFileSync } from 'node:fs';

export function judgeable(text, dialects, { every = false } = {}) {
  const routes = {};
  let current;
  for (const line of text.split('\n')) {
    const header = /^\[route\.([A-Za-z0-9_-]+)\]/.exec(line);
    if (header) { current = header[1]; routes[current] = routes[current] ?? ''; continue; }
    if (/^\[/.test(line)) { current = undefined; continue; }
    const d = /^dialect\s*=\s*"([a-z]+)"/.exec(line);
    if (current && d) routes[current] = d[1];
  }
  const primary = /^primary\s*=\s*"([^"]+)"/m.exec(text)?.[1] ?? 'primary';
  const expect = /^expect_attempts\s*=\s*\{([^}]*)\}/m.exec(text)?.[1] ?? '';
  const expected = Object.fromEntries(expect.split(',').map((kv) => kv.split('=').map((x) => x.trim())).filter((kv) => kv.length === 2));
  if (!dialects.includes(routes[primary])) return false;
  return Object.entries(routes).every(([name, dialect]) => dialects.includes(dialect) || (!every && expected[name] === '0'));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const args = process.argv.slice(2);
  const every = args[0] === '--every';
  const [list, ...files] = every ? args.slice(1) : args;
  const dialects = list.split(/[,|]/);
  for (const f of files) if (judgeable(readFileSync(f, 'utf8'), dialects, { every })) console.log(f);
}
