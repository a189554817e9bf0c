// LangChain.js as its docs show it: ChatOpenAI / ChatAnthropic with their defaults (maxRetries 6), and
// the case's fallback routes it speaks added with withFallbacks (tried on any error). See lib/langchain.mjs.
import { runDefault } from './lib/run.mjs';
import { DIALECTS, langchainChat, langchainModel } from './lib/langchain.mjs';

await runDefault((env) => {
  const fallbacks = env.fallbacks.filter((r) => DIALECTS.includes(r.dialect)).map((r) => langchainModel(r, env));
  const primary = langchainModel(env.primary, env);
  return langchainChat(fallbacks.length ? primary.withFallbacks(fallbacks) : primary, env.request);
});
