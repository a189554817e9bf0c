// The "default" client: the SDK as most teams first ship it. One client on the primary route, SDK
// defaults everywhere (maxRetries 2 = up to 3 attempts, 10 min timeout), no fallback of its own: an
// error goes to the caller. Every retry it makes is the SDK's own, and the mock's ledger counts it.
import { chat, describe, readEnv, report } from './common.mjs';

export async function runPlain({ dialect, makeClient }) {
  const env = readEnv();
  if (env.primary.dialect !== dialect) throw new Error(`primary route ${env.primary.name} speaks ${env.primary.dialect}, not ${dialect}`);
  const client = makeClient(env.primary, env);
  try {
    const answer = await chat(dialect, client, env.request);
    report('success', { route: env.primary.name, ...answer });
  } catch (err) {
    console.error(`${env.primary.name}: ${describe(err)}`);
    report('error', { text: '' });
    process.exitCode = 1;
  }
}
