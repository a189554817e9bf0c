// Asserts the pattern of the SDK example suites (examples/run-sdk-suites --out DIR): run by
// run-sdk-suites-test.sh (CTest `sdk_suites`). Not a *.test.mjs: the `sdk_tier` test runs those.
//   node tests/sdk/sdk-suites.check.mjs DIR
// What must hold:
//  - the harness counts the SDKs' internal retries: with default settings both SDKs send a quota 429
//    three times (the ledger shows 3 attempts on the quota route, over max_total_attempts = 2) and
//    the case fails; a persistent overload breaks the budget the same way; a post-commit silence is
//    retried into a duplicate commit;
//  - the hardened clients (maxRetries 0, their own fallback) pass every case;
//  - examples/sdk pins the SDK versions that tests/sdk installs, and those are what ran.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const out = process.argv[2];
if (!out) throw new Error('usage: sdk-suites.check.mjs DIR');

const json = (p) => JSON.parse(readFileSync(p, 'utf8'));
const failures = [];
const check = (what, fn) => {
  try {
    fn();
    console.log(`ok   ${what}`);
  } catch (e) {
    failures.push(what);
    console.log(`FAIL ${what}\n     ${String(e.message).split('\n').join('\n     ')}`);
  }
};

const CASES = ['ok', 'quota-429-falls-back', 'rate-429-short-retry-after-retried', 'rate-429-long-retry-after-falls-back',
  'overloaded-prestream-retried', 'overloaded-persistent-within-budget', 'stream-cut-before-tokens-retried',
  'stream-cut-after-tokens-fails-closed', 'post-commit-timeout-no-duplicate', 'connect-reset-retried',
  'bad-request-fails-closed', 'server-500-bare-fails-closed'];

// The default clients run (at least) these: run-sdk-suites-test.sh filters them to save node start-ups.
const DEFAULT_CASES = ['quota-429-falls-back', 'overloaded-persistent-within-budget', 'post-commit-timeout-no-duplicate',
  'bad-request-fails-closed', 'connect-reset-retried'];

const reports = {};
for (const client of ['openai-default', 'openai-hardened', 'anthropic-default', 'anthropic-hardened']) {
  const want = client.endsWith('-hardened') ? CASES : DEFAULT_CASES;
  check(`${client}: report with ${want === CASES ? 'every case' : 'the asserted cases'}, none unknown, driver exec`, () => {
    const r = json(join(out, client, 'report.json'));
    reports[client] = Object.fromEntries(r.cases.map((c) => [basename(c.file, '.toml'), c]));
    assert.equal(r.driver, 'exec');
    for (const s of want) assert.ok(s in reports[client], `${s} missing`);
    assert.ok(Object.keys(reports[client]).every((s) => CASES.includes(s)), Object.keys(reports[client]).join(', '));
    const unknown = r.cases.filter((c) => c.verdict === 'unknown').map((c) => `${basename(c.file)}: ${c.unknown_reason}\n${c.driver_output}`);
    assert.deepEqual(unknown, []);
  });
}
const get = (client, slug) => {
  const c = reports[client]?.[slug];
  if (!c) throw new Error(`no report of ${client} / ${slug}`);
  return c;
};
const failedChecks = (c) => (c.checks ?? []).filter((k) => !k.ok).map((k) => k.name);
const explain = (c) => `${c.summary}\nattempts ${JSON.stringify(c.attempts_by_route)}\n${c.driver_output}`;

for (const sdk of ['openai', 'anthropic']) {
  const def = `${sdk}-default`, hard = `${sdk}-hardened`;

  check(`${def}: the SDK retries a quota 429 (3 attempts in the ledger) and the case fails`, () => {
    const c = get(def, 'quota-429-falls-back');
    assert.equal(c.verdict, 'fail', explain(c));
    assert.equal(c.attempts_by_route.primary, 3, explain(c));  // maxRetries 2: counted, not hidden
    assert.equal(c.attempts_by_route.backup, 0, explain(c));
    assert.equal(c.ledger.filter((e) => e.route === 'primary' && e.fault === 'quota_429').length, 3, explain(c));
    assert.equal(c.observed, 'retry', explain(c));
    assert.ok(failedChecks(c).includes('max_total_attempts'), explain(c));
    // The SDK's own retry counter, as the mock recorded it: these were the SDK's internal retries.
    assert.deepEqual(c.ledger.map((e) => e.x_stainless_retry_count), ['0', '1', '2'], explain(c));
  });

  check(`${def}: a persistent overload gets 3 attempts against a budget of 2`, () => {
    const c = get(def, 'overloaded-persistent-within-budget');
    assert.equal(c.verdict, 'fail', explain(c));
    assert.equal(c.attempts_by_route.primary, 3, explain(c));
    assert.deepEqual(c.observed_actions, ['retry', 'retry', 'fail_closed'], explain(c));
    assert.ok(failedChecks(c).includes('max_total_attempts'), explain(c));
  });

  check(`${def}: a silence after the commit is retried into a duplicate commit`, () => {
    const c = get(def, 'post-commit-timeout-no-duplicate');
    assert.equal(c.verdict, 'fail', explain(c));
    assert.equal(c.attempts_by_route.primary, 2, explain(c));
    assert.ok(failedChecks(c).includes('no_duplicate_commit'), explain(c));
  });

  check(`${def}: a 400 is not retried, a reset before any byte is (the SDK's own retry, seen in the ledger)`, () => {
    const bad = get(def, 'bad-request-fails-closed');
    assert.equal(bad.verdict, 'pass', explain(bad));
    assert.equal(bad.attempts_by_route.primary, 1, explain(bad));
    const reset = get(def, 'connect-reset-retried');
    assert.equal(reset.attempts_by_route.primary, 2, explain(reset));
    assert.equal(reset.observed, 'retry', explain(reset));
  });

  check(`${hard}: passes every case`, () => {
    const failed = Object.entries(reports[hard] ?? {}).filter(([, c]) => c.verdict !== 'pass').map(([s, c]) => `${s}: ${explain(c)}`);
    assert.equal(Object.keys(reports[hard] ?? {}).length, CASES.length);
    assert.deepEqual(failed, []);
  });

  check(`${hard}: the quota 429 is tried once, then the fallback serves`, () => {
    const c = get(hard, 'quota-429-falls-back');
    assert.deepEqual(c.attempts_by_route, { primary: 1, backup: 1 }, explain(c));
    assert.equal(c.observed, 'fallback', explain(c));
    assert.equal(c.observed_outcome, 'fallback_recovery', explain(c));
  });
}

check('examples/sdk/package.json pins the SDK versions of tests/sdk, and those are installed', () => {
  const ex = json(join(root, 'examples', 'sdk', 'package.json')).dependencies;
  const tier = json(join(root, 'tests', 'sdk', 'package.json')).dependencies;
  for (const name of ['openai', '@anthropic-ai/sdk', '@google/genai']) {
    assert.equal(ex[name], tier[name], name);
    const installed = json(join(root, 'tests', 'sdk', 'node_modules', ...name.split('/'), 'package.json')).version;
    assert.equal(installed, tier[name], `${name} installed in tests/sdk`);
  }
});

if (failures.length) {
  console.log(`\n${failures.length} check(s) failed`);
  process.exit(1);
}
console.log('\nall checks passed');
