// @google/genai, hardened: no SDK retries (retryOptions unset), the team's own retry / fallback in SPEC
// order (lib/hardened.mjs). genai's ApiError keeps the status and the body's message but no headers:
// the Retry-After comes from the response runPolicy's fetch saw; the attempt timeout is that fetch's.
import { chat, loadSdk, readEnv } from './lib/common.mjs';
import { classifyWith, runPolicy } from './lib/hardened.mjs';

const { ApiError, GoogleGenAI } = await loadSdk('@google/genai');
const env = readEnv();
const clients = new Map();

await runPolicy({
  // Only routes this SDK speaks: a fallback of another dialect would need another SDK.
  routes: [env.primary, ...env.fallbacks].filter((r) => r.dialect === 'gemini'),
  headerTimeout: true,
  classify: classifyWith((err) => (err instanceof ApiError ? { status: err.status, body: err.message ?? '' } : undefined)),
  attempt: (route, { signal, onOpen, onText, fetch }) => {
    if (!clients.has(route.name)) {
      clients.set(route.name, new GoogleGenAI({
        apiKey: 'gemini-llmchaos-example',
        httpOptions: { baseUrl: route.baseURL, headers: { 'Idempotency-Key': env.operationId }, fetch },
      }));
    }
    return chat('gemini', clients.get(route.name), env.request, { signal, onOpen, onText });
  },
});
