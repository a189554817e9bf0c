"""What to do after a failed attempt: "retry" (after wait_s), "fallback" (the next route) or "fail"."""
from __future__ import annotations

BACKOFF_S = 0.2


def is_quota(status: int, body: str) -> bool:
    """A quota or billing 429 does not clear by waiting (OpenAI's insufficient_quota)."""
    return status == 429 and ("insufficient_quota" in body or "billing" in body)


def decide(status: int, body: str, retry_after_s: float | None, left_s: float) -> tuple[str, float]:
    if status in (400, 401, 403, 404):
        return "fail", 0.0
    if is_quota(status, body):
        return "fallback", 0.0
    wait_s = retry_after_s if retry_after_s is not None else BACKOFF_S
    if status == 429 or status >= 500 or status == 0:
        # wait only when the wait and one more attempt fit what is left of the deadline
        return ("retry", wait_s) if wait_s + 1.0 < left_s else ("fallback", 0.0)
    return "fail", 0.0
