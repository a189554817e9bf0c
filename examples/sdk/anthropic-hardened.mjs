// @anthropic-ai/sdk, hardened: maxRetries 0, a short timeout, the team's own retry / fallback
// (lib/hardened.mjs).
import { loadSdk } from './lib/common.mjs';
import { runHardened } from './lib/hardened.mjs';

const sdk = await loadSdk('@anthropic-ai/sdk');

await runHardened({
  dialect: 'anthropic',
  sdk,
  makeClient: (route, env, { maxRetries, timeout, fetch }) => new sdk.Anthropic({
    apiKey: 'sk-ant-llmchaos-example',
    baseURL: route.baseURL,
    maxRetries,  // 0: a quota 429 or a 529 is not retried behind our back, and every attempt is counted by us
    timeout,     // to the response headers (the stream's idle gaps are ours, lib/hardened.mjs)
    fetch,       // the global fetch, timed: the request's budget starts at its first send
    defaultHeaders: { 'Idempotency-Key': env.operationId },
  }),
});
