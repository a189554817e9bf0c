// openai with its defaults: maxRetries 2, timeout 10 min, no fallback. See lib/plain.mjs.
import { loadSdk } from './lib/common.mjs';
import { runPlain } from './lib/plain.mjs';

const { OpenAI } = await loadSdk('openai');

await runPlain({
  dialect: 'openai',
  makeClient: (route, env) => new OpenAI({
    apiKey: 'sk-llmchaos-example',
    baseURL: route.baseURL,
    // The harness ties the attempts of one request together by this header (the SDK sends none).
    defaultHeaders: { 'Idempotency-Key': env.operationId },
  }),
});
