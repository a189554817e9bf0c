// LangChain.js (@langchain/openai, @langchain/anthropic): one chat model per route, invoke or stream.
import { ChatAnthropic } from '@langchain/anthropic';
import { ChatOpenAI } from '@langchain/openai';
import { FILTERED, PREFILL } from '../../sdk/lib/common.mjs';

export const DIALECTS = ['openai', 'anthropic'];

// The route's chat model. `maxRetries` undefined: LangChain's default (6, its AsyncCaller's exponential
// backoff); the underlying SDK client is built by LangChain with its own retries off.
export function langchainModel(route, env, { maxRetries, fetch } = {}) {
  // The harness ties the attempts of one request together by this header (LangChain sends none).
  const defaultHeaders = { 'Idempotency-Key': env.operationId };
  const retries = maxRetries === undefined ? {} : { maxRetries };
  const model = env.request.model;
  if (route.dialect === 'openai') {
    return new ChatOpenAI({ model, apiKey: 'sk-llmchaos-example', configuration: { baseURL: route.baseURL, defaultHeaders, fetch }, ...retries });
  }
  if (route.dialect === 'anthropic') {
    return new ChatAnthropic({ model, apiKey: 'sk-ant-llmchaos-example', anthropicApiUrl: route.baseURL, clientOptions: { defaultHeaders, fetch }, ...retries });
  }
  throw new Error(`the LangChain example has no chat model for ${route.dialect}`);
}

const textOf = (content) => (typeof content === 'string' ? content
  : (content ?? []).map((b) => (typeof b === 'string' ? b : b.type === 'text' || b.type === 'text_delta' ? b.text ?? '' : '')).join(''));

// One request through a runnable (a chat model, or one wrapped by withFallbacks). `finished`: a chunk
// carried its provider's finish reason (openai finish_reason, anthropic stop_reason); reported, not judged
// (how the body ended is the caller's).
export async function langchainChat(runnable, request, { signal, onText = () => {} } = {}) {
  const input = request.prefill ? [['human', request.prompt], ['ai', PREFILL]] : request.prompt;
  if (!request.stream) {
    const m = await runnable.invoke(input, { signal });
    const text = textOf(m.content);
    onText(text);
    const finish = m.response_metadata?.finish_reason ?? m.response_metadata?.stop_reason ?? '';
    return { text, model: m.response_metadata?.model_name ?? m.response_metadata?.model ?? request.model, output_tokens: m.usage_metadata?.output_tokens ?? 0, finish_reason: finish, filtered: FILTERED.test(finish) };
  }
  let text = '', finished = false, model = request.model, tokens = 0, finish = '';
  for await (const chunk of await runnable.stream(input, { signal })) {
    const d = textOf(chunk.content);
    if (d) { text += d; onText(d); }
    const meta = { ...chunk.additional_kwargs, ...chunk.response_metadata };
    if (meta.finish_reason || meta.stop_reason) { finished = true; finish = meta.finish_reason ?? meta.stop_reason; }
    model = meta.model_name ?? meta.model ?? model;
    tokens = chunk.usage_metadata?.output_tokens || tokens;
  }
  return { text, model, output_tokens: tokens, finished, finish_reason: finish, filtered: FILTERED.test(finish) };
}

// {status, body, code, header} of an HTTP error (LangChain passes the SDK's APIError on, with its
// status, headers and parsed body), else undefined.
export function langchainFacts(err) {
  const status = err?.status ?? err?.response?.status;
  if (!Number.isInteger(status)) return undefined;
  return {
    status,
    body: `${JSON.stringify(err.error ?? {})} ${err.message ?? ''}`,
    code: err.code ?? err.error?.code ?? err.error?.error?.code,
    header: (k) => err.headers?.get?.(k) ?? null,
  };
}
