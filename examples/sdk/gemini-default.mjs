// @google/genai with its defaults: no retries (retryOptions unset), no fallback. See lib/plain.mjs.
import { loadSdk } from './lib/common.mjs';
import { runPlain } from './lib/plain.mjs';

const { GoogleGenAI } = await loadSdk('@google/genai');

await runPlain({
  dialect: 'gemini',
  makeClient: (route, env) => new GoogleGenAI({
    apiKey: 'gemini-llmchaos-example',
    httpOptions: {
      baseUrl: route.baseURL,
      // The harness ties the attempts of one request together by this header (the SDK sends none).
      headers: { 'Idempotency-Key': env.operationId },
    },
  }),
});
