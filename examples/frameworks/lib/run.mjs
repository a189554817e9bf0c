// The two ways a team runs a framework client (the SDK suites' plain / hardened, examples/sdk/lib/):
//   runDefault: the framework's defaults, one call; an error goes to the caller.
//   runHardenedFramework: the framework's retries off, the team's policy loop (examples/sdk/lib/hardened.mjs)
//   over every route the framework speaks, in any dialect (a cross-dialect fallback is one model away).
import { describe, readEnv, report } from '../../sdk/lib/common.mjs';
import { classifyWith, runPolicy } from '../../sdk/lib/hardened.mjs';

// `call(env)` -> {text, model, output_tokens}; throws the framework's error.
export async function runDefault(call) {
  const env = readEnv();
  try {
    const answer = await call(env);
    report('success', answer);
  } catch (err) {
    console.error(describe(err));
    report('error', { text: '' });
    process.exitCode = 1;
  }
}

// `attempt(route, env, hooks)` as runPolicy's (hooks.fetch must be the framework's fetch), `facts` the
// framework's HTTP error facts (classifyWith), `dialects` what the framework speaks.
export async function runHardenedFramework({ dialects, attempt, facts }) {
  const env = readEnv();
  await runPolicy({
    routes: [env.primary, ...env.fallbacks].filter((r) => dialects.includes(r.dialect)),
    headerTimeout: true,  // the time to the response headers: runPolicy's fetch, for every framework alike
    classify: classifyWith(facts),
    attempt: (route, hooks) => attempt(route, env, {
      ...hooks,
      // A streamed answer's headers arm the idle timer (re-armed at every visible token).
      fetch: async (url, init) => {
        const res = await hooks.fetch(url, init);
        if (env.request.stream && res.ok) hooks.onOpen();
        return res;
      },
    }),
  });
}
