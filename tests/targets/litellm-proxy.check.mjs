// Asserts the verdicts target_litellm_proxy expects of the LiteLLM proxy (run-litellm-proxy-test.sh),
// each as the full run showed it (examples/README.md).
//   node tests/targets/litellm-proxy.check.mjs REPORT.json
import { checkVerdicts, failedChecks } from './check-verdicts.mjs';

checkVerdicts('litellm-proxy.check', process.argv[2], 'litellm-proxy ', {
  // Answered whole from the primary, but `model` restamped to the requested "mock-model".
  'ok-streamed': (c) => c.verdict === 'fail' && c.attempts_by_route.primary === 1 &&
    failedChecks(c).join() === 'names_serving_route',
  // The Router falls back on any error, a 401 too.
  'auth-401-fails-closed': (c) => c.verdict === 'fail' && c.observed === 'fallback' && c.attempts_by_route.backup === 1,
  'rate-429-retried': (c) => c.verdict === 'pass' && c.observed === 'retry',
  'server-500-queued': (c) => c.verdict === 'n/a' && c.reason.startsWith('needs capability queue'),
});
