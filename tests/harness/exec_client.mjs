// A tiny client for the exec driver's tests: tries the primary once, then each fallback once (no
// retries, plain requests), and prints the contract's last line. EXEC_CLIENT_MODE=hang|crash|silent
// makes it misbehave on purpose.
import { setTimeout as sleep } from "node:timers/promises";

const mode = process.env.EXEC_CLIENT_MODE || "";
if (mode === "hang") { console.log("hanging"); await sleep(600000); }
if (mode === "crash") { console.log("about to crash"); process.kill(process.pid, "SIGSEGV"); }

const req = JSON.parse(process.env.LLMCHAOS_REQUEST);
const routes = [process.env.LLMCHAOS_PRIMARY, ...(process.env.LLMCHAOS_FALLBACK || "").split(",").filter(Boolean)];

async function call(route) {
  const key = route.toUpperCase().replace(/[^A-Z0-9]/g, "_");
  const base = process.env[`LLMCHAOS_${key}_BASE_URL`];
  const dialect = process.env[`LLMCHAOS_${key}_DIALECT`];
  const msgs = [{ role: "user", content: req.prompt }];
  const [url, body] =
    dialect === "openai" ? [`${base}/chat/completions`, { model: req.model, messages: msgs }]
    : dialect === "anthropic" ? [`${base}/v1/messages`, { model: req.model, max_tokens: 256, messages: msgs }]
    : [`${base}/v1beta/models/${req.model}:generateContent`, { contents: [{ role: "user", parts: [{ text: req.prompt }] }] }];
  const res = await fetch(url, { method: "POST", headers: { "content-type": "application/json", "x-api-key": "k", authorization: "Bearer k" },
                                 body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });
  const json = await res.json();
  if (!res.ok) throw new Error(`${route}: HTTP ${res.status}`);
  if (dialect === "openai")
    return { text: json.choices[0].message.content, model: json.model, output_tokens: json.usage?.completion_tokens };
  if (dialect === "anthropic")
    return { text: json.content.map((c) => c.text || "").join(""), model: json.model, output_tokens: json.usage?.output_tokens };
  return { text: json.candidates[0].content.parts.map((p) => p.text || "").join(""), model: json.modelVersion,
           output_tokens: json.usageMetadata?.candidatesTokenCount };
}

for (const [i, route] of routes.entries()) {
  try {
    const answer = await call(route);
    if (mode !== "silent") console.log(JSON.stringify({ outcome: i === 0 ? "primary_success" : "fallback_recovery", route, ...answer }));
    process.exit(0);
  } catch (e) {
    console.error(String(e));
  }
}
if (mode !== "silent") console.log(JSON.stringify({ outcome: "fail_closed", text: "" }));
process.exit(3);
