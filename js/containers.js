'use strict';
// llmchaostest/containers: llmchaos from its image on the `testcontainers` npm package (an optional
// peer dependency: install it beside this one). startLlmchaosContainer() resolves to the same Chaos
// object startLlmchaos() gives, so chaos.case(PATH), c.baseUrl(route), c.finish(...) and the verdicts
// work unchanged. README.md: "In a container".
const path = require('node:path');
const fs = require('node:fs');
const { Chaos, newToken, CONTAINER_CASES } = require('./index.js');

let tc;
try {
  tc = require('testcontainers');
} catch (e) {
  throw new Error('llmchaostest/containers needs the `testcontainers` package (npm install --save-dev testcontainers): ' + e.message);
}
const { GenericContainer, Wait } = tc;

const DEFAULT_IMAGE = 'llmchaos:0.1.0';   // the helper's own version
const PORT = 8080;
const STARTUP_TIMEOUT_MS = 180000;        // a loaded 2-core CI runner

// The one regular file of a `docker cp`-style tar stream (copyArchiveFromContainer), as a Buffer.
async function fileFromTar(stream) {
  const chunks = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  const tar = Buffer.concat(chunks);
  for (let at = 0; at + 512 <= tar.length;) {
    const header = tar.subarray(at, at + 512);
    if (header.every((b) => b === 0)) break;
    const size = parseInt(header.subarray(124, 136).toString('latin1').replace(/\0.*$/s, '').trim() || '0', 8);
    const type = String.fromCharCode(header[156] || 48);
    if (type === '0' || type === '\0') return tar.subarray(at + 512, at + 512 + size);
    at += 512 + Math.ceil(size / 512) * 512;   // a pax or GNU header: skip it
  }
  throw new Error('no file in the archive');
}

// The llmchaos image as a testcontainers GenericContainer: port 8080 exposed, a token in
// LLMCHAOS_ADMIN_TOKEN, `serve --host 0.0.0.0 --port 8080`, cases copied to /cases before it starts,
// and a wait for the line "listening on http://" and GET /__llmchaos/ready 200.
class LlmchaosContainer extends GenericContainer {
  constructor(image) {
    super(image || process.env.LLMCHAOS_DOCKER_IMAGE || DEFAULT_IMAGE);
    this.adminToken = process.env.LLMCHAOS_ADMIN_TOKEN || newToken();
    this.casesDir = undefined;
    this.serveArgs = [];
    this.withExposedPorts(PORT)
      .withLabels({ llmchaostest: '1' })
      .withWaitStrategy(Wait.forAll([
        Wait.forLogMessage(/listening on http:\/\//),
        Wait.forHttp('/__llmchaos/ready', PORT).forStatusCode(200),
      ]))
      .withStartupTimeout(STARTUP_TIMEOUT_MS);
  }

  /** copies the folder dir (files and subfolders) to /cases before the container starts */
  withCases(dir) {
    const source = path.resolve(dir);
    if (!fs.statSync(source).isDirectory()) throw new Error(`withCases: not a folder: ${source}`);
    this.casesDir = source;
    return this.withCopyDirectoriesToContainer([{ source, target: CONTAINER_CASES }]);
  }

  withAdminToken(token) { this.adminToken = token; return this; }
  withTimeScale(scale) { this.serveArgs.push('--time-scale', String(scale)); return this; }
  withServeArgs(...args) { this.serveArgs.push(...args); return this; }

  async start() {
    this.withEnvironment({ LLMCHAOS_ADMIN_TOKEN: this.adminToken })
      .withCommand(['serve', '--host', '0.0.0.0', '--port', String(PORT), ...this.serveArgs]);
    return new StartedLlmchaosContainer(await super.start(), this);
  }
}

class StartedLlmchaosContainer {
  constructor(started, spec) {
    this.container = started;
    this.adminToken = spec.adminToken;
    this.casesDir = spec.casesDir;
    this.url = `http://${started.getHost()}:${started.getMappedPort(PORT)}`;
  }

  getId() { return this.container.getId(); }
  getBaseUrl() { return this.url; }

  /** the helper's own Chaos over this container (options: baseDir, as startLlmchaos takes) */
  chaos(options = {}) {
    const container = this.container;
    const backend = {
      stop: () => container.stop(),
      async copyOut(from, to) { fs.writeFileSync(to, await fileFromTar(await container.copyArchiveFromContainer(from))); },
    };
    return new Chaos(undefined, this.url, { ...options, token: this.adminToken, casesDir: this.casesDir, backend }, undefined);
  }

  stop(options) { return this.container.stop(options); }
}

// startLlmchaos() on an image: {image, casesDir (default baseDir), baseDir, token, timeScale, args,
// startTimeoutMs}. Resolves to a Chaos; chaos.stop() stops and removes the container.
async function startLlmchaosContainer(options = {}) {
  const spec = new LlmchaosContainer(options.image);
  const cases = options.casesDir || process.env.LLMCHAOS_CASES_DIR || options.baseDir;
  if (cases) spec.withCases(cases);
  if (options.token) spec.withAdminToken(options.token);
  if (options.timeScale !== undefined) spec.withTimeScale(options.timeScale);
  if (options.args) spec.withServeArgs(...options.args);
  if (options.startTimeoutMs) spec.withStartupTimeout(options.startTimeoutMs);
  const started = await spec.start();
  return started.chaos(options);
}

module.exports = { LlmchaosContainer, StartedLlmchaosContainer, startLlmchaosContainer, DEFAULT_IMAGE, fileFromTar };
