// The Vercel AI SDK with its defaults: generateText / streamText on the primary route's provider,
// maxRetries 2 (up to 3 attempts, its own backoff and Retry-After handling), no fallback (the AI SDK
// has none of its own). See lib/vercel.mjs.
import { runDefault } from './lib/run.mjs';
import { vercelChat, vercelModel } from './lib/vercel.mjs';

await runDefault((env) => vercelChat(vercelModel(env.primary, env), env.request));
