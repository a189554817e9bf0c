// Node's own HTTP/2 client (node:http2, h2c with prior knowledge, no npm package) against `llmchaos serve`:
// an openai chat completion and a bedrock converse-stream multiplexed on one session, the stream's DATA
// read as whole eventstream frames, and a stream_cut seen by node as the stream's RST_STREAM
// (NGHTTP2_INTERNAL_ERROR). Usage: node node_h2c.mjs LLMCHAOS_BIN. Exit 0: pass.
import { spawn } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import { tmpdir } from "node:os";
import { join } from "node:path";

const dir = mkdtempSync(join(tmpdir(), "llmchaos-h2c-"));
const script = join(dir, "script.toml");
writeFileSync(script, `[route.oa]\ndialect = "openai"\nscript = [{ fault = "ok" }]\n\n` +
  `[route.br]\ndialect = "bedrock"\nscript = [{ fault = "ok" }]\n\n` +
  `[route.cut]\ndialect = "bedrock"\nscript = [{ fault = "stream_cut", cut_after_events = 2 }]\n`);
const server = spawn(process.argv[2], ["serve", "--script", script, "--port", "0"], { stdio: ["ignore", "pipe", "inherit"] });
const fail = (what) => { console.error(`FAIL: ${what}`); server.kill("SIGTERM"); process.exit(1); };
setTimeout(() => fail("timed out"), 20000).unref();

const port = await new Promise((resolve) => {
  let out = "";
  server.stdout.on("data", (d) => {
    out += d;
    const m = out.match(/listening on http:\/\/127\.0\.0\.1:(\d+)/);
    if (m) resolve(m[1]);
  });
});
const session = http2.connect(`http://127.0.0.1:${port}`);
function call(path, body) {
  return new Promise((resolve) => {
    const req = session.request({ ":method": "POST", ":path": path, "content-type": "application/json" });
    const got = { status: 0, headers: {}, chunks: [], error: null, rstCode: 0 };
    req.on("response", (h) => { got.status = h[":status"]; got.headers = h; });
    req.on("data", (d) => got.chunks.push(d));
    req.on("error", (e) => { got.error = e; });
    req.on("close", () => { got.rstCode = req.rstCode; got.body = Buffer.concat(got.chunks); resolve(got); });
    req.end(body);
  });
}
// Whole eventstream frames: each prelude's total length, back to back, to the last byte.
function frameCount(buf) {
  let n = 0, at = 0;
  while (at + 12 <= buf.length) { at += buf.readUInt32BE(at); ++n; }
  return at === buf.length ? n : -1;
}
const bedrockPath = (route) => `/${route}/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream`;
const bedrockBody = JSON.stringify({ messages: [{ role: "user", content: [{ text: "hi" }] }] });
const [a, b] = await Promise.all([
  call("/oa/v1/chat/completions", JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] })),
  call(bedrockPath("br"), bedrockBody),
]);
if (a.status !== 200 || !a.body.toString().includes('"chat.completion"')) fail(`openai: ${a.status} ${a.body}`);
if (b.status !== 200 || b.headers["content-type"] !== "application/vnd.amazon.eventstream") fail(`bedrock: ${b.status}`);
const frames = frameCount(b.body);
if (frames < 4) fail(`bedrock: ${frames} whole eventstream frames in ${b.body.length} bytes`);
const cut = await call(bedrockPath("cut"), bedrockBody);
if (cut.status !== 200 || cut.rstCode !== http2.constants.NGHTTP2_INTERNAL_ERROR || frameCount(cut.body) < 2)
  fail(`stream_cut: status ${cut.status}, rstCode ${cut.rstCode}, ${cut.body.length} bytes`);
session.close();
const ledger = await new Promise((resolve) => {
  const s = http2.connect(`http://127.0.0.1:${port}`);
  const req = s.request({ ":path": "/__llmchaos/ledger" });
  const chunks = [];
  req.on("data", (d) => chunks.push(d));
  req.on("end", () => { s.close(); resolve(JSON.parse(Buffer.concat(chunks).toString())); });
  req.end();
});
if (ledger.length !== 3 || !ledger.every((e) => e.protocol === "h2")) fail(`ledger: ${JSON.stringify(ledger)}`);
console.log(`node ${process.version} node:http2: openai ${a.status}, bedrock converse-stream ${b.status} ` +
  `(${frames} eventstream frames), stream_cut RST_STREAM ${cut.rstCode}, ledger protocol h2 x${ledger.length}`);
server.kill("SIGTERM");
