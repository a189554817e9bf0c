// Asserts the verdicts go_suites expects of the Go clients (run-go-suites-test.sh): what the full
// suites showed (examples/README.md, "Go clients"), the libraries' real failures included.
//   node tests/go/go.check.mjs --cases     the case files to run (one a line)
//   node tests/go/go.check.mjs OUT         check OUT/<target>/report.json
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const attempts = (c, route) => c.attempts_by_route?.[route] ?? 0;
const failedWith = (action, primary) => (c) => c.verdict === 'fail' && c.observed === action && attempts(c, 'primary') === primary;
const passedWith = (action) => (c) => c.verdict === 'pass' && c.observed === action;

const quota = { openai: 'examples/cases/openai/quota-429-falls-back.toml', anthropic: 'examples/cases/anthropic/quota-429-falls-back.toml' };
const cut = { openai: 'examples/cases/openai/stream-cut-before-tokens-retried.toml', anthropic: 'examples/cases/anthropic/stream-cut-before-tokens-retried.toml' };
const noTerminator = { openai: 'cases/faults/openai/no-terminator-streamed.toml', anthropic: 'cases/faults/anthropic/no-terminator-streamed.toml' };
const overloaded = 'examples/cases/openai/overloaded-prestream-retried.toml';

// target -> case file -> what its verdict must be
const expect = {
  'openai-go-default': {
    [quota.openai]: failedWith('retry', 3),         // the SDK retries a spent quota twice, never reaches the backup
    [cut.openai]: failedWith('fail_closed', 1),     // a cut before any token: `unexpected EOF` to the caller
    [noTerminator.openai]: passedWith('none'),
    [overloaded]: passedWith('retry'),
  },
  'openai-go-hardened': {
    [quota.openai]: passedWith('fallback'), [cut.openai]: passedWith('retry'),
    [noTerminator.openai]: passedWith('none'), [overloaded]: passedWith('retry'),
  },
  'go-openai-default': {
    [quota.openai]: failedWith('fail_closed', 1),   // no retries, no fallback
    [cut.openai]: failedWith('fail_closed', 1),     // Recv() returns `unexpected EOF` for a cut, not io.EOF
    [noTerminator.openai]: passedWith('none'),      // Recv() returns io.EOF without [DONE]: the answer is taken
    [overloaded]: failedWith('fail_closed', 1),     // no retries of its own
  },
  'go-openai-hardened': {
    [quota.openai]: passedWith('fallback'), [cut.openai]: passedWith('retry'),
    [noTerminator.openai]: passedWith('none'), [overloaded]: passedWith('retry'),
  },
  'anthropic-go-default': {
    [quota.anthropic]: failedWith('retry', 3), [cut.anthropic]: failedWith('fail_closed', 1),
    [noTerminator.anthropic]: passedWith('none'),
  },
  'anthropic-go-hardened': {
    [quota.anthropic]: passedWith('fallback'), [cut.anthropic]: passedWith('retry'),
    [noTerminator.anthropic]: passedWith('none'),
  },
};

if (process.argv[2] === '--cases') {
  for (const f of new Set(Object.values(expect).flatMap((byCase) => Object.keys(byCase)))) console.log(f);
  process.exit(0);
}
const out = process.argv[2];
let good = 0, bad = 0;
for (const [target, byCase] of Object.entries(expect)) {
  const report = JSON.parse(readFileSync(join(out, target, 'report.json'), 'utf8'));
  for (const [file, ok] of Object.entries(byCase)) {
    const c = report.cases.find((k) => k.file === file);
    const line = c ? `${c.verdict} ${c.observed} ${JSON.stringify(c.attempts_by_route)} ${c.unknown_reason || ''}` : 'not run';
    const fine = c && ok(c);
    fine ? ++good : ++bad;
    console.log(`${fine ? 'ok  ' : 'BAD '} ${target} ${file}: ${line}`);
  }
  if (!report.label.startsWith(`${target} (github.com/`)) { ++bad; console.log(`BAD  label: ${report.label}`); }
}
console.log(`go.check: ${good} passed, ${bad} failed`);
process.exit(bad ? 1 : 0);
