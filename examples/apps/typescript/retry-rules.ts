// What to do after a failed attempt: "retry" (after waitS), "fallback" (the next route) or "fail".
export type Action = 'retry' | 'fallback' | 'fail';
const BACKOFF_S = 0.2;

// A quota or billing 429 does not clear by waiting (OpenAI's insufficient_quota).
export function isQuota(status: number, body: string): boolean {
  return status === 429 && (body.includes('insufficient_quota') || body.includes('billing'));
}

export function decide(status: number, body: string, retryAfterS: number | null, leftS: number): [Action, number] {
  if ([400, 401, 403, 404].includes(status)) return ['fail', 0];
  if (isQuota(status, body)) return ['fallback', 0];
  const waitS = retryAfterS ?? BACKOFF_S;
  if (status === 429 || status >= 500 || status === 0) {
    // wait only when the wait and one more attempt fit what is left of the deadline
    return waitS + 1.0 < leftS ? ['retry', waitS] : ['fallback', 0];
  }
  return ['fail', 0];
}
