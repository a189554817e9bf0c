// The Vercel AI SDK (`ai` with @ai-sdk/openai, @ai-sdk/anthropic, @ai-sdk/google, @ai-sdk/amazon-bedrock):
// one model per route (any of the four dialects), one call per request through generateText / streamText.
import { createAmazonBedrock } from '@ai-sdk/amazon-bedrock';
import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { APICallError, RetryError, generateText, streamText } from 'ai';
import { FILTERED, PREFILL } from '../../sdk/lib/common.mjs';

export const DIALECTS = ['openai', 'anthropic', 'gemini', 'bedrock'];

// The route's model. The exec contract's base URLs are what the official SDKs take; the AI SDK's
// providers want the API version in theirs (anthropic `/v1`, google `/v1beta`). openai: the chat
// completions API (`.chat`), which the mock (and most OpenAI-compatible servers) speak. bedrock: the
// Converse API over fetch (HTTP/1.1), SigV4-signed with dummy keys (aws4fetch); the base URL keeps the
// route's path prefix (`BASE/model/{id}/converse`).
export function vercelModel(route, env, { fetch } = {}) {
  // The harness ties the attempts of one request together by this header (the AI SDK sends none).
  const headers = { 'Idempotency-Key': env.operationId };
  const model = env.request.model;
  if (route.dialect === 'openai') return createOpenAI({ apiKey: 'sk-llmchaos-example', baseURL: route.baseURL, headers, fetch }).chat(model);
  if (route.dialect === 'anthropic') return createAnthropic({ apiKey: 'sk-ant-llmchaos-example', baseURL: `${route.baseURL}/v1`, headers, fetch })(model);
  if (route.dialect === 'gemini') return createGoogleGenerativeAI({ apiKey: 'gemini-llmchaos-example', baseURL: `${route.baseURL}/v1beta`, headers, fetch })(model);
  if (route.dialect === 'bedrock') {
    return createAmazonBedrock({ region: 'us-east-1', accessKeyId: 'AKIDLLMCHAOSEXAMPLE', secretAccessKey: 'llmchaos-example-secret',
                                 baseURL: route.baseURL, headers, fetch })(model);
  }
  throw new Error(`the AI SDK example has no provider for ${route.dialect}`);
}

const finishName = (f) => (typeof f === 'object' && f !== null ? f.unified ?? f.type : f);

// One request: generateText, or streamText read through its full stream (an `error` part is thrown; the
// finish reason is what the AI SDK says, reported, not judged: how the body ended is the caller's). `maxRetries` is the AI SDK's own (default
// 2: up to 3 attempts, 2 s then 4 s backoff, Retry-After honoured under 60 s).
export async function vercelChat(model, request, { maxRetries, signal, onText = () => {} } = {}) {
  const prompt = request.prefill ? { messages: [{ role: 'user', content: request.prompt }, { role: 'assistant', content: PREFILL }] }
                                 : { prompt: request.prompt };
  const opts = { model, ...prompt, abortSignal: signal, ...(maxRetries === undefined ? {} : { maxRetries }) };
  if (!request.stream) {
    const r = await generateText(opts);
    onText(r.text);
    const finish = finishName(r.finishReason) ?? '';
    return { text: r.text, model: r.response?.modelId ?? request.model, output_tokens: r.usage?.outputTokens ?? 0, finish_reason: finish, filtered: FILTERED.test(finish) };
  }
  // onError: the AI SDK logs stream errors to the console by default; they are read from the stream here.
  const r = streamText({ ...opts, onError: () => {} });
  let text = '', finish, modelId = request.model, tokens = 0;
  for await (const part of r.fullStream) {
    if (part.type === 'text-delta') { text += part.text; onText(part.text); }
    else if (part.type === 'error') throw part.error;
    else if (part.type === 'abort') throw new Error('the stream was aborted');
    else if (part.type === 'finish-step') modelId = part.response?.modelId ?? modelId;
    else if (part.type === 'finish') { finish = finishName(part.finishReason); tokens = part.totalUsage?.outputTokens ?? tokens; }
  }
  return { text, model: modelId, output_tokens: tokens, finish_reason: finish ?? '', filtered: FILTERED.test(finish ?? '') };
}

// {status, body, code, header} of an HTTP error the AI SDK wrapped (APICallError; a RetryError holds
// the last one), else undefined.
export function vercelFacts(err) {
  const e = RetryError.isInstance(err) ? err.lastError : err;
  if (!APICallError.isInstance(e) || e.statusCode === undefined) return undefined;
  const body = e.responseBody ?? '';
  let code;
  try { code = JSON.parse(body)?.error?.code; } catch { /* not JSON */ }
  return { status: e.statusCode, body: `${body} ${e.message}`, code, header: (k) => e.responseHeaders?.[k] ?? null };
}
