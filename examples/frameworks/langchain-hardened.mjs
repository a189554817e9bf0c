// LangChain.js, hardened: maxRetries 0 on every chat model, no withFallbacks (it falls back on any
// error, a 400 or a committed stream included): the team's own retry / fallback in SPEC order.
import { runHardenedFramework } from './lib/run.mjs';
import { DIALECTS, langchainChat, langchainFacts, langchainModel } from './lib/langchain.mjs';

const models = new Map();
await runHardenedFramework({
  dialects: DIALECTS,
  facts: langchainFacts,
  attempt: (route, env, { signal, onText, fetch }) => {
    if (!models.has(route.name)) models.set(route.name, langchainModel(route, env, { maxRetries: 0, fetch }));
    return langchainChat(models.get(route.name), env.request, { signal, onText });
  },
});
