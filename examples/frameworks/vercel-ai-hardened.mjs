// The Vercel AI SDK, hardened: maxRetries 0, the team's own retry / fallback in SPEC order over every
// route of the case (openai, anthropic and google providers: a fallback may change dialect).
import { runHardenedFramework } from './lib/run.mjs';
import { DIALECTS, vercelChat, vercelFacts, vercelModel } from './lib/vercel.mjs';

const models = new Map();
await runHardenedFramework({
  dialects: DIALECTS,
  facts: vercelFacts,
  attempt: (route, env, { signal, onText, fetch }) => {
    if (!models.has(route.name)) models.set(route.name, vercelModel(route, env, { fetch }));
    return vercelChat(models.get(route.name), env.request, { maxRetries: 0, signal, onText });
  },
});
