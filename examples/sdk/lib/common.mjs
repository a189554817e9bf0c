// Shared plumbing of the example clients: the exec driver's environment (harness/drivers/README.md),
// the SDK packages, one call per dialect through the official SDK, and the contract's last stdout line.
// The clients themselves (../*.mjs) hold only what a team decides: SDK options and the failure policy.
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

// The SDKs, pinned in ../package.json to the same versions as tests/sdk/package.json. They resolve
// from examples/sdk/node_modules when someone ran `npm install` there, else from tests/sdk/node_modules
// (installed by the SDK test tier, tests/sdk/run-tests.sh): one install serves both.
// LLMCHAOS_SDK_DIR names another folder whose node_modules alone are used (the version matrix's
// previous majors, examples/versions/).
export async function loadSdk(name) {
  const bases = process.env.LLMCHAOS_SDK_DIR ? [resolve(process.env.LLMCHAOS_SDK_DIR)]  // relative: to the cwd
                                             : [join(here, '..'), join(here, '..', '..', '..', 'tests', 'sdk')];
  for (const base of bases) {
    if (!existsSync(join(base, 'node_modules', ...name.split('/')))) continue;
    const require = createRequire(join(base, 'package.json'));
    const mod = await import(pathToFileURL(require.resolve(name)).href);
    return mod.default ?? mod;
  }
  throw new Error(`cannot find the package ${name} in ${bases.join(', ')}: run \`npm ci\` in tests/sdk (or in examples/sdk)`);
}

function envRoute(name) {
  return name.toUpperCase().replace(/[^A-Z0-9]/g, '_');
}

// Everything the harness passes: the request, the routes in the order the team's policy tries them.
export function readEnv() {
  const need = (k) => {
    const v = process.env[k];
    if (v === undefined) throw new Error(`${k} is not set: run this under \`llmchaos run --driver exec\``);
    return v;
  };
  const request = JSON.parse(need('LLMCHAOS_REQUEST'));
  const route = (name) => ({
    name,
    baseURL: need(`LLMCHAOS_${envRoute(name)}_BASE_URL`),
    dialect: need(`LLMCHAOS_${envRoute(name)}_DIALECT`),
  });
  const primary = route(need('LLMCHAOS_PRIMARY'));
  const fallbacks = (process.env.LLMCHAOS_FALLBACK ?? '').split(',').filter(Boolean).map(route);
  return {
    request,
    operationId: process.env.LLMCHAOS_OPERATION_ID ?? request.operation_id ?? '',
    primary,
    fallbacks,
    // The team's own timeouts and budgets are multiplied by this, like the cases' budgets are by
    // `llmchaos run --time-scale` (examples/run-sdk-suites passes the same value). 1 = real time.
    timeScale: Number(process.env.LLMCHAOS_SDK_TIME_SCALE ?? '1') || 1,
    // The case's policy (the exec driver's LLMCHAOS_POLICY_JSON), or undefined: the client's own.
    policy: process.env.LLMCHAOS_POLICY_JSON ? JSON.parse(process.env.LLMCHAOS_POLICY_JSON) : undefined,
  };
}

// The contract's last stdout line; the program exits once it is written (with process.exitCode, which
// the caller may still set in this tick). In a service the call is over when it returns: keep-alive
// sockets or a framework's background timers (LangChain's tracing) that keep node alive for seconds
// after the answer are not the call, and the exec driver times the call to the program's exit.
export function report(outcome, fields = {}) {
  process.stdout.write(`${JSON.stringify({ outcome, ...fields })}\n`, () => process.exit());
}

// The assistant prefill a `prefill` request ends with (client/src/codec_detail.hpp's prefill_text).
export const PREFILL = '{';

// An answer the provider ended for its content policy (the chat functions' `filtered`): a hardened
// client fails it closed (owner policy); a default client takes it as it comes.
export class ContentFiltered extends Error {
  constructor(reason) {
    super(`the answer was ended by the provider's content policy (finish reason ${reason})`);
    this.name = 'ContentFiltered';
  }
}
export const FILTERED = /^(content[_-]?filter|refusal|safety|recitation|prohibited_content|blocklist|spii)$/i;

// A stream that stopped before its dialect's end (no finish reason / message_stop): the answer is cut.
export class TruncatedStream extends Error {
  constructor(visible) {
    super(`the stream ended without its final event after ${visible} visible text chars`);
    this.name = 'TruncatedStream';
  }
}

// One chat call through the official SDK client `client` of `dialect`. `onText` sees each visible text
// delta (so the caller knows whether anything was committed), `onOpen` the stream's headers. `signal`
// aborts the call (the caller's idle timeout). openai / anthropic: a stream without its finish event is a
// TruncatedStream; a gemini stream is as whole as its body (a cut throws; a clean end without the last
// finishReason chunk is a complete answer, SPEC's no_terminator).
// Returns {text, model, output_tokens, finish_reason, filtered} (`filtered`: the finish reason is the
// provider's content policy, FILTERED); throws the SDK's error or TruncatedStream.
export async function chat(dialect, client, request, { onText = () => {}, onOpen = () => {}, signal, requestOptions = {} } = {}) {
  // A prefill request ends with an assistant turn that starts the answer (PREFILL), as the harness's own
  // codecs send it.
  const messages = [{ role: 'user', content: request.prompt }, ...(request.prefill ? [{ role: 'assistant', content: PREFILL }] : [])];
  const model = request.model;
  if (dialect === 'openai') {
    if (!request.stream) {
      const r = await client.chat.completions.create({ model, messages }, { ...requestOptions, signal });
      const text = r.choices?.[0]?.message?.content ?? '';
      onText(text);
      const finish = r.choices?.[0]?.finish_reason ?? '';
      return { text, model: r.model, output_tokens: r.usage?.completion_tokens ?? 0, finish_reason: finish, filtered: FILTERED.test(finish) };
    }
    const stream = await client.chat.completions.create(
      { model, messages, stream: true, stream_options: { include_usage: true } }, { ...requestOptions, signal });
    onOpen();
    let text = '', gotModel = '', tokens = 0, finished = false, finish = '';
    for await (const chunk of stream) {
      gotModel = chunk.model || gotModel;
      if (chunk.usage) tokens = chunk.usage.completion_tokens ?? tokens;
      for (const choice of chunk.choices ?? []) {
        const d = choice.delta?.content;
        if (d) { text += d; onText(d); }
        if (choice.finish_reason) { finished = true; finish = choice.finish_reason; }
      }
    }
    if (!finished) throw new TruncatedStream(text.length);
    return { text, model: gotModel, output_tokens: tokens, finish_reason: finish, filtered: FILTERED.test(finish) };
  }
  if (dialect === 'anthropic') {
    const body = { model, max_tokens: 256, messages };
    if (!request.stream) {
      const r = await client.messages.create(body, { ...requestOptions, signal });
      const text = (r.content ?? []).filter((b) => b.type === 'text').map((b) => b.text).join('');
      onText(text);
      const finish = r.stop_reason ?? '';
      return { text, model: r.model, output_tokens: r.usage?.output_tokens ?? 0, finish_reason: finish, filtered: FILTERED.test(finish) };
    }
    const stream = await client.messages.create({ ...body, stream: true }, { ...requestOptions, signal });
    onOpen();
    let text = '', gotModel = '', tokens = 0, finished = false, finish = '';
    for await (const ev of stream) {
      if (ev.type === 'message_start') gotModel = ev.message?.model ?? gotModel;
      else if (ev.type === 'content_block_delta' && ev.delta?.type === 'text_delta') { text += ev.delta.text; onText(ev.delta.text); }
      else if (ev.type === 'message_delta') { tokens = ev.usage?.output_tokens ?? tokens; finish = ev.delta?.stop_reason ?? finish; }
      else if (ev.type === 'message_stop') finished = true;
    }
    // Whole when its stop_reason came (message_delta), message_stop or not (SPEC's no_terminator).
    if (!finished && !finish) throw new TruncatedStream(text.length);
    return { text, model: gotModel, output_tokens: tokens, finish_reason: finish, filtered: FILTERED.test(finish) };
  }
  if (dialect === 'gemini') {
    // @google/genai: the request's abort signal rides in `config`; its ApiError carries status and message.
    const contents = [{ role: 'user', parts: [{ text: request.prompt }] },
                      ...(request.prefill ? [{ role: 'model', parts: [{ text: PREFILL }] }] : [])];
    const params = { model, contents, config: { abortSignal: signal } };
    if (!request.stream) {
      const r = await client.models.generateContent(params);
      const text = r.text ?? '';
      onText(text);
      const finish = r.candidates?.[0]?.finishReason ?? '';
      return { text, model: r.modelVersion ?? model, output_tokens: r.usageMetadata?.candidatesTokenCount ?? 0, finish_reason: finish, filtered: FILTERED.test(finish) };
    }
    const stream = await client.models.generateContentStream(params);
    onOpen();
    let text = '', gotModel = '', tokens = 0, finish = '';
    for await (const chunk of stream) {
      gotModel = chunk.modelVersion || gotModel;
      tokens = chunk.usageMetadata?.candidatesTokenCount ?? tokens;
      const d = chunk.text;
      if (d) { text += d; onText(d); }
      finish = chunk.candidates?.find((c) => c.finishReason)?.finishReason ?? finish;
    }
    return { text, model: gotModel, output_tokens: tokens, finish_reason: finish, filtered: FILTERED.test(finish) };
  }
  throw new Error(`this client speaks no ${dialect} (a route of another dialect needs another SDK)`);
}

// A one-line description of an SDK error for stderr (the report keeps it as the program's output).
export function describe(err) {
  const parts = [err?.constructor?.name ?? 'Error', err?.status ?? '', err?.message ?? String(err)];
  let c = err?.cause, depth = 0;
  while (c && depth++ < 4) {
    parts.push(`cause: ${c.code ?? c.name ?? ''} ${c.message ?? ''}`);
    c = c.cause;
  }
  return parts.filter((p) => p !== '').join(' | ');
}

// The error codes anywhere on an error's cause chain (undici puts ECONNRESET two levels down).
export function causeCodes(err) {
  const codes = [];
  for (let c = err, depth = 0; c && depth < 6; c = c.cause, depth++) if (c.code) codes.push(String(c.code));
  return codes;
}
