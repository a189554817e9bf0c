// Asserts the verdicts target_suites expects of the Portkey gateway (run-target-suites-test.sh).
//   node tests/targets/targets.check.mjs REPORT.json
import { checkVerdicts } from './check-verdicts.mjs';

checkVerdicts('targets.check', process.argv[2], 'portkey ', {
  'ok-streamed': (c) => c.verdict === 'pass' && c.attempts_by_route.primary === 1,
  'auth-401-fails-closed': (c) => c.verdict === 'fail' && c.observed === 'fallback' && c.attempts_by_route.backup === 1,
  'rate-429-retried': (c) => c.verdict === 'pass' && c.observed === 'retry',
  'server-500-queued': (c) => c.verdict === 'n/a' && c.reason.startsWith('needs capability queue'),
});
