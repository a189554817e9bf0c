'use strict';
// llmchaostest: a thin client of `llmchaos serve`'s session API for Vitest and Jest (README.md).
const { spawn, execFileSync } = require('node:child_process');
const fs = require('node:fs');
const path = require('node:path');
const readline = require('node:readline');

const SESSIONS = '/__llmchaos/sessions';

class CaseFailed extends Error {
  constructor(message) {
    super(message);
    this.name = 'CaseFailed';
  }
}

// The platform package's binary (esbuild's way: an optionalDependency picked by os/cpu), else
// LLMCHAOS_BIN, else `llmchaos` on PATH.
function findBinary(explicit) {
  if (explicit) return checked(explicit, 'given explicitly');
  try {
    const bundled = require.resolve(`llmchaostest-${process.platform}-${process.arch}/bin/llmchaos`);
    if (isExecutable(bundled)) return bundled;
  } catch (_) { /* no platform package for this os/cpu: fall through */ }
  if (process.env.LLMCHAOS_BIN) return checked(process.env.LLMCHAOS_BIN, 'named by LLMCHAOS_BIN');
  try {
    const found = execFileSync('sh', ['-c', 'command -v llmchaos'], { encoding: 'utf8' }).trim();
    if (found) return found;
  } catch (_) { /* not on PATH */ }
  throw new Error(`llmchaos binary not found: no llmchaostest-${process.platform}-${process.arch} package, ` +
    'LLMCHAOS_BIN is unset and `llmchaos` is not on PATH');
}

function isExecutable(file) {
  try { fs.accessSync(file, fs.constants.X_OK); return fs.statSync(file).isFile(); } catch (_) { return false; }
}

function checked(file, how) {
  if (!isExecutable(file)) throw new Error(`llmchaos binary ${how} is not an executable file: ${file}`);
  return file;
}

function verdictMessage(v, caseName) {
  const where = v.file ? ` (${v.file})` : '';
  const lines = [`llmchaos case "${v.case || caseName}"${where}: ${v.verdict}: expected ${v.expected}, observed ${v.observed}`];
  for (const key of ['reason', 'unknown_reason']) if (v[key]) lines.push(`  ${key.replace('_', ' ')}: ${v[key]}`);
  for (const c of v.checks || []) if (!c.passed) lines.push(`  check ${c.name} failed: ${c.message}`);
  if ((v.actions || []).length) lines.push(`  actions: ${v.actions.join(', ')}`);
  return lines.join('\n');
}

class Case {
  constructor(chaos, facts, file) {
    this.chaos = chaos;
    this.facts = facts;
    this.file = file;
    this.id = facts.id;
    this.namespace = facts.namespace;
    this.routes = facts.routes || {};
    this.request = facts.request || {};
    this.policy = facts.policy || {};
    this.primary = facts.primary || (this.policy.workflow || {}).primary;
    this.fallback = facts.fallback || (this.policy.workflow || {}).fallback || [];
    this.operationId = this.request.operation_id || '';
    this.verdict = undefined;
  }

  get name() { return this.facts.case || path.basename(this.file, '.toml'); }
  get routeOrder() { return [this.primary, ...this.fallback]; }

  baseUrl(route) {
    const r = this.routes[route];
    if (!r) throw new Error(`case ${this.file} has no route "${route}"; its routes: ${Object.keys(this.routes).sort().join(', ')}`);
    return r.base_url;
  }

  dialect(route) { this.baseUrl(route); return this.routes[route].dialect; }

  // What the caller saw ({outcome, text, route, model}); a sequence case: an array, one per request.
  async finish(seen) {
    this.verdict = await this.chaos.call('POST', `${SESSIONS}/${this.id}/finish`, seen);
    this.chaos.judged.push(this.verdict);
    return this.verdict;
  }

  // [checks] alive_after: after the requests, alive() turns the routes healthy and returns the probe's
  // Idempotency-Key; send one more request, then finish with one more object.
  get aliveAfter() { return Boolean(this.facts.alive_after); }
  async alive() { return (await this.chaos.call('POST', `${SESSIONS}/${this.id}/alive`)).operation_id; }

  ledger() { return this.chaos.call('GET', `${SESSIONS}/${this.id}`); }

  async end() {
    if (this.ended) return;
    this.ended = true;
    try { await this.chaos.call('DELETE', `${SESSIONS}/${this.id}`); } catch (_) { /* already ended */ }
  }

  // Throws CaseFailed with the checker's messages unless the verdict is a pass.
  assertPassed() {
    if (!this.verdict) throw new CaseFailed(`llmchaos case "${this.name}" (${this.file}): finish() was never called: nothing was judged`);
    if (this.verdict.verdict === 'n/a') return this.verdict;  // exact_time: only a virtual clock can judge it
    if (this.verdict.verdict !== 'pass') throw new CaseFailed(verdictMessage(this.verdict, this.name));
    return this.verdict;
  }
}

class Chaos {
  constructor(proc, url, options, binary) {
    this.proc = proc;
    this.binary = binary;
    this.url = url;
    this.baseDir = options.baseDir || process.cwd();
    this.judged = [];
  }

  async case(file) {
    const resolved = path.resolve(this.baseDir, file);
    if (!fs.existsSync(resolved)) throw new Error(`llmchaos case not found: ${resolved}`);
    const facts = await this.call('POST', SESSIONS, { case_path: resolved });
    return new Case(this, facts, resolved);
  }

  // Opens the case, runs `body(case)`, ends the session; throws with the checker's messages unless it passed.
  async run(file, body) {
    const c = await this.case(file);
    try {
      await body(c);
      return c.assertPassed();
    } finally {
      await c.end();
    }
  }

  // junit.xml, report.json, report.md and report.html of every case this server judged, into dir
  // (POST /__llmchaos/sessions/reports). One server per test file: give each file a dir of its own.
  async writeReports(dir) {
    const folder = path.resolve(dir);
    fs.mkdirSync(folder, { recursive: true });
    return this.call('POST', `${SESSIONS}/reports`, { dir: folder });
  }

  async call(method, route, body) {
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers['content-type'] = 'application/json';
    }
    const answer = await fetch(this.url + route, init);
    const text = await answer.text();
    if (!answer.ok) {
      let message = text;
      try { message = JSON.parse(text).error || text; } catch (_) { /* not JSON */ }
      throw new Error(`${method} ${route}: ${answer.status}: ${message}`);
    }
    return text ? JSON.parse(text) : {};
  }

  async stop() {
    const proc = this.proc;
    if (!proc || proc.exitCode !== null) return;
    await new Promise((resolve) => {
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      proc.once('exit', () => { clearTimeout(timer); resolve(); });
      proc.kill('SIGTERM');
    });
  }
}

// Starts `llmchaos serve --port 0` (one per test file: call it in beforeAll, stop() in afterAll).
function startLlmchaos(options = {}) {
  const binary = findBinary(options.binary);
  const args = ['serve', '--port', '0'];
  if (options.timeScale !== undefined) args.push('--time-scale', String(options.timeScale));
  const proc = spawn(binary, args.concat(options.args || []), { stdio: ['ignore', 'pipe', 'pipe'] });
  const output = [];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { proc.kill('SIGKILL'); reject(new Error(`llmchaos serve did not print its URL within ${options.startTimeoutMs || 30000} ms:\n${output.join('\n')}`)); },
      options.startTimeoutMs || 30000);
    let listening = false;
    proc.stderr.on('data', (d) => output.push(String(d)));
    readline.createInterface({ input: proc.stdout }).on('line', (line) => {
      if (output.length < 200) output.push(line);
      if (!listening && line.startsWith('listening on ')) {
        listening = true;
        clearTimeout(timer);
        resolve(new Chaos(proc, line.slice('listening on '.length).trim(), options, binary));
      }
    });
    proc.once('error', (e) => { clearTimeout(timer); reject(e); });
    proc.once('exit', (code) => {
      if (!listening) { clearTimeout(timer); reject(new Error(`llmchaos serve exited (${code}) before listening:\n${output.join('\n')}`)); }
    });
  });
}

module.exports = { startLlmchaos, findBinary, verdictMessage, Case, Chaos, CaseFailed };
