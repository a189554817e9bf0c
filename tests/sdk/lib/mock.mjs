// Starts `llmchaos serve` as a child process on 127.0.0.1 port 0 with a TOML fault script, reads the
// attempt ledger over the admin API, and stops the server. The SDK tests talk to it as users would:
// through the official SDKs, with only the base URL pointed at the mock.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { after, before } from 'node:test';

const START_TIMEOUT_MS = 10_000;
const STOP_TIMEOUT_MS = 3_000;

export function llmchaosBin() {
  const bin = process.env.LLMCHAOS_BIN;
  if (!bin) throw new Error('LLMCHAOS_BIN is not set (the path of the llmchaos binary)');
  return bin;
}

// Every server this process started, so an aborted test run still stops them.
const running = new Set();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export class MockServer {
  #child;
  #dir;
  #stderr = '';

  constructor(child, dir, baseUrl) {
    this.#child = child;
    this.#dir = dir;
    this.baseUrl = baseUrl;  // "http://127.0.0.1:PORT"
    child.stderr.on('data', (d) => { this.#stderr += d; });
  }

  // `script` is the TOML text of a `--script` file; `command`: the subcommand and its other arguments
  // (`llmchaos proxy --upstream URL` starts the proxy instead, which prints the same first line).
  static async start(script, command = ['serve']) {
    const dir = mkdtempSync(join(tmpdir(), 'llmchaos-sdk-'));
    const file = join(dir, 'script.toml');
    writeFileSync(file, script);
    const child = spawn(llmchaosBin(), [...command, '--script', file, '--port', '0'],
                        { stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(child);
    child.on('exit', () => running.delete(child));
    let stderr = '';
    child.stderr.on('data', (d) => { stderr += d; });
    try {
      const line = await firstLine(child);
      const m = /^listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(line.trim());
      if (!m) throw new Error(`unexpected first stdout line: ${JSON.stringify(line)}`);
      return new MockServer(child, dir, m[1]);
    } catch (err) {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
      throw new Error(`llmchaos ${command[0]} did not start: ${err.message}\nstderr: ${stderr}`);
    }
  }

  url(route) { return `${this.baseUrl}/${route}`; }

  // The attempt ledger (arrival order); with `route`, only that route's attempts.
  async ledger(route) {
    const res = await fetch(`${this.baseUrl}/__llmchaos/ledger`);
    if (res.status !== 200) throw new Error(`GET /__llmchaos/ledger: ${res.status} ${await res.text()}`);
    const entries = await res.json();
    return route === undefined ? entries : entries.filter((e) => e.route === route);
  }

  // The ledger once every attempt of `route` has finished: the mock writes an attempt's outcome
  // when it is done on the wire, which can be a moment after the client saw the error.
  async settledLedger(route, { tries = 50 } = {}) {
    for (let i = 0; i < tries; ++i) {
      const entries = await this.ledger(route);
      if (entries.every((e) => e.finished)) return entries;
      await new Promise((r) => setTimeout(r, 20));
    }
    return this.ledger(route);
  }

  get stderr() { return this.#stderr; }

  // SIGTERM, then SIGKILL if it is still there after STOP_TIMEOUT_MS. Resolves with the exit code.
  async stop() {
    const child = this.#child;
    try {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      const exited = new Promise((resolve) => child.once('exit', (code) => resolve(code)));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      const code = await exited;
      clearTimeout(timer);
      return code;
    } finally {
      rmSync(this.#dir, { recursive: true, force: true });
    }
  }
}

function firstLine(child) {
  return new Promise((resolve, reject) => {
    const rl = createInterface({ input: child.stdout });
    const timer = setTimeout(() => reject(new Error(`no stdout line within ${START_TIMEOUT_MS} ms`)),
                             START_TIMEOUT_MS);
    rl.once('line', (line) => {
      clearTimeout(timer);
      rl.close();
      child.stdout.resume();  // keep draining so the server never blocks on a full pipe
      resolve(line);
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`exited early (code ${code}, signal ${signal})`));
    });
    child.once('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
  });
}

// Builds the TOML of a script: { routeName: { dialect, steps: [{fault, ...}], then? } }.
export function scriptToml(routes) {
  const lines = [];
  for (const [name, r] of Object.entries(routes)) {
    lines.push(`[route.${name}]`, `dialect = ${JSON.stringify(r.dialect)}`);
    const steps = r.steps.map((s) => `  { ${Object.entries(s).map(([k, v]) => `${k} = ${JSON.stringify(v)}`).join(', ')} },`);
    lines.push('script = [', ...steps, ']');
    if (r.then) lines.push(`then = ${JSON.stringify(r.then)}`);
    lines.push('');
  }
  return lines.join('\n');
}

// Runs `fn` and returns what it threw; fails if it did not throw.
export async function rejection(fn) {
  try {
    await fn();
  } catch (err) {
    return err;
  }
  throw new Error('expected the call to throw, it returned normally');
}

// The first `n` words of a canonical text: what a client sees after `n` content events.
export function firstWords(text, n) {
  return text.split(' ').slice(0, n).join(' ');
}

// One `llmchaos serve` for the enclosing describe(): started before its tests with the routes' script,
// stopped after them (exit code 0 after SIGTERM, or the server's stderr). Returns a handle whose
// `mock` is the running MockServer (null until before() ran, or when it failed and said why).
export function serveForSuite(routes) {
  const handle = { mock: null };
  before(async () => { handle.mock = await MockServer.start(scriptToml(routes)); });
  after(async () => {
    if (!handle.mock) return;  // before() failed and said why
    assert.equal(await handle.mock.stop(), 0, `llmchaos serve exit code after SIGTERM; stderr: ${handle.mock.stderr}`);
  });
  return handle;
}
