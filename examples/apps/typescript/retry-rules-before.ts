// The "before" version, with a real bug: the error body is never read, so a quota 429
// (insufficient_quota, which does not clear by waiting) looks like any rate limit and is retried on the
// same key, burning the budget before the fallback. CHAT_SERVICE_RULES=before selects it.
import { decide as decideFixed, type Action } from './retry-rules';

export function decide(status: number, _body: string, retryAfterS: number | null, leftS: number): [Action, number] {
  return decideFixed(status, '', retryAfterS, leftS); // the bug: body dropped
}
