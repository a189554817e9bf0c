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

// The image's cases root and reports root (LLMCHAOS_CASES_ROOT, LLMCHAOS_REPORTS_ROOT).
const CONTAINER_CASES = '/cases';
const CONTAINER_REPORTS = '/tmp';

class Chaos {
  // options.token: sent as `Authorization: Bearer` with every session call; options.casesDir: the host
  // folder the server sees as its cases root (a container's /cases); options.backend: {stop(),
  // copyOut(from, to)} where the server runs elsewhere (a container).
  constructor(proc, url, options, binary) {
    this.proc = proc;
    this.binary = binary;
    this.url = url;
    this.baseDir = options.baseDir || process.cwd();
    this.token = options.token || undefined;
    this.casesDir = options.casesDir ? path.resolve(options.casesDir) : undefined;
    this.backend = options.backend;
    this.judged = [];
  }

  // A case file (relative to baseDir). On a container: a path inside casesDir is sent relative to it,
  // a case outside it as its TOML text (a `policy = "..."` it names must then be in /cases too).
  async case(file) {
    const resolved = path.resolve(this.baseDir, file);
    if (!fs.existsSync(resolved)) throw new Error(`llmchaos case not found: ${resolved}`);
    let facts;
    if (this.casesDir) {
      const rel = path.relative(this.casesDir, resolved);
      if (rel === '..' || rel.startsWith('..' + path.sep) || path.isAbsolute(rel)) {
        facts = await this.call('POST', SESSIONS, fs.readFileSync(resolved, 'utf8'), 'application/toml');
      } else {
        facts = await this.call('POST', SESSIONS, { case_path: rel.split(path.sep).join('/') });
      }
    } else {
      facts = await this.call('POST', SESSIONS, { case_path: resolved });
    }
    return new Case(this, facts, resolved);
  }

  // A case given as TOML text (errors name the pseudo file <session>).
  async caseText(toml) {
    const facts = await this.call('POST', SESSIONS, toml, 'application/toml');
    return new Case(this, facts, '<session>');
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
  // On a container the server writes them under its reports root (/tmp) and they are copied out into
  // dir; `written` then names the copies.
  async writeReports(dir) {
    const folder = path.resolve(dir);
    fs.mkdirSync(folder, { recursive: true });
    if (!this.backend) return this.call('POST', `${SESSIONS}/reports`, { dir: folder });
    const inside = `llmchaostest-reports-${require('node:crypto').randomBytes(4).toString('hex')}`;
    const result = await this.call('POST', `${SESSIONS}/reports`, { dir: inside });
    const copies = [];
    for (const written of result.written || []) {
      const from = written.startsWith('/') ? written : `${CONTAINER_REPORTS}/${written}`;
      const to = path.join(folder, path.posix.basename(from));
      await this.backend.copyOut(from, to);
      copies.push(to);
    }
    return { ...result, written: copies };
  }

  async call(method, route, body, contentType) {
    const init = { method, headers: {} };
    if (body !== undefined) {
      init.body = contentType ? body : JSON.stringify(body);
      init.headers['content-type'] = contentType || 'application/json';
    }
    if (this.token) init.headers.authorization = `Bearer ${this.token}`;
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
    if (this.backend) return this.backend.stop();
    const proc = this.proc;
    if (!proc || proc.exitCode !== null) return;
    await new Promise((resolve) => {
      const timer = setTimeout(() => proc.kill('SIGKILL'), 5000);
      proc.once('exit', () => { clearTimeout(timer); resolve(); });
      proc.kill('SIGTERM');
    });
  }
}

// A random admin token (32 hex digits).
function newToken() { return require('node:crypto').randomBytes(16).toString('hex'); }

// The `llmchaos serve` arguments every way of starting it shares.
function serveArgs(options) {
  const args = [];
  if (options.timeScale !== undefined) args.push('--time-scale', String(options.timeScale));
  return args.concat(options.args || []);
}

// Starts `llmchaos serve --port 0` (one per test file: call it in beforeAll, stop() in afterAll); with
// an image (options.image or LLMCHAOS_DOCKER_IMAGE) it runs the server from it instead (docker CLI).
function startLlmchaos(options = {}) {
  const image = options.image || process.env.LLMCHAOS_DOCKER_IMAGE;
  if (image) return startDocker(image, options);
  const binary = findBinary(options.binary);
  const token = options.token || process.env.LLMCHAOS_ADMIN_TOKEN;
  // The test's own server on loopback reads the cases and writes the reports the test names, wherever
  // they are (as the test itself may): its roots are the filesystem's.
  const args = ['serve', '--port', '0', '--cases-root', '/', '--reports-root', '/'].concat(serveArgs(options));
  if (token) args.push('--admin-token', token);
  options = { ...options, token, casesDir: undefined };   // casesDir is a container's /cases: not here
  const proc = spawn(binary, args, { stdio: ['ignore', 'pipe', 'pipe'] });
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

// GET /__llmchaos/ready (open without the token) until 200, or throws at the deadline (ms since epoch).
async function waitReady(url, deadline) {
  let last = 'not tried';
  while (Date.now() < deadline) {
    try {
      const answer = await fetch(`${url}/__llmchaos/ready`, { signal: AbortSignal.timeout(2000) });
      await answer.text();
      if (answer.status === 200) return;
      last = `GET ${url}/__llmchaos/ready: ${answer.status}`;
    } catch (e) { last = String(e && e.message || e); }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`llmchaos not ready in time: ${last}`);
}

// The docker CLI way (LLMCHAOS_DOCKER_IMAGE): `docker run --rm` with 8080 published on 127.0.0.1, the
// token in LLMCHAOS_ADMIN_TOKEN (options.token, the variable, else a random one), the cases folder
// (options.casesDir, else LLMCHAOS_CASES_DIR, else baseDir) mounted read-only at /cases; it waits for the "listening on" line
// and GET /__llmchaos/ready 200 (options.startTimeoutMs, default 180000). No npm dependency: the
// testcontainers way is llmchaostest/containers.
function startDocker(image, options) {
  const token = options.token || process.env.LLMCHAOS_ADMIN_TOKEN || newToken();
  const casesDir = path.resolve(options.casesDir || process.env.LLMCHAOS_CASES_DIR || options.baseDir || process.cwd());
  const name = `llmchaostest-${newToken().slice(0, 12)}`;
  const timeoutMs = options.startTimeoutMs || 180000;
  const deadline = Date.now() + timeoutMs;
  const args = ['run', '--rm', '--name', name, '--label', 'llmchaostest=1', '-p', '127.0.0.1::8080',
    '-e', 'LLMCHAOS_ADMIN_TOKEN', '-v', `${casesDir}:${CONTAINER_CASES}:ro`,
    image, 'serve', '--host', '0.0.0.0', '--port', '8080'].concat(serveArgs(options));
  const proc = spawn('docker', args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, LLMCHAOS_ADMIN_TOKEN: token } });
  // The container must not outlive this process, whether or not stop() is called.
  const remove = () => { try { execFileSync('docker', ['rm', '-f', name], { stdio: 'ignore' }); } catch (_) { /* gone */ } };
  process.once('exit', remove);
  const backend = {
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) {
        await new Promise((resolve) => {
          const timer = setTimeout(resolve, 5000);
          proc.once('exit', () => { clearTimeout(timer); resolve(); });
          proc.kill('SIGTERM');
        });
      }
      remove();
      process.removeListener('exit', remove);
    },
    async copyOut(from, to) { execFileSync('docker', ['cp', `${name}:${from}`, to], { stdio: ['ignore', 'ignore', 'pipe'] }); },
  };
  const output = [];
  return new Promise((resolve, reject) => {
    const fail = (message) => { clearTimeout(timer); backend.stop().finally(() => reject(new Error(`docker run ${image}: ${message}:\n${output.join('\n')}`))); };
    const timer = setTimeout(() => fail(`no "listening on" line within ${timeoutMs} ms`), timeoutMs);
    let listening = false;
    proc.stderr.on('data', (d) => output.push(String(d)));
    readline.createInterface({ input: proc.stdout }).on('line', (line) => {
      if (output.length < 200) output.push(line);
      if (listening || !line.startsWith('listening on http://')) return;
      listening = true;
      clearTimeout(timer);
      let url;
      try {
        const port = execFileSync('docker', ['port', name, '8080/tcp'], { encoding: 'utf8' }).split('\n')[0].trim();
        url = `http://${port}`;
      } catch (e) { fail(`docker port: ${e.message}`); return; }
      waitReady(url, deadline).then(
        () => resolve(new Chaos(proc, url, { ...options, token, casesDir, backend }, undefined)),
        (e) => fail(e.message));
    });
    proc.once('error', (e) => { clearTimeout(timer); reject(e); });
    proc.once('exit', (code) => {
      if (!listening) { clearTimeout(timer); reject(new Error(`docker run ${image} exited (${code}) before listening:\n${output.join('\n')}`)); }
    });
  });
}

module.exports = { startLlmchaos, findBinary, verdictMessage, waitReady, newToken, Case, Chaos, CaseFailed,
  CONTAINER_CASES, CONTAINER_REPORTS };
