"""The "before" version, with a real bug: the error body is never read, so a quota 429
(insufficient_quota, which does not clear by waiting) looks like any rate limit and is retried on the
same key, burning the budget before the fallback. CHAT_SERVICE_RULES=before selects it."""
from __future__ import annotations

import retry_rules


def decide(status: int, body: str, retry_after_s: float | None, left_s: float) -> tuple[str, float]:
    return retry_rules.decide(status, "", retry_after_s, left_s)  # the bug: body dropped
