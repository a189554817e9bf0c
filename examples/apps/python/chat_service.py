"""A small classification service with its own resilience code: one call to the primary route, retries
for what clears by waiting, the fallback route for what does not. Plain urllib, no SDK.

`classify(prompt, routes)` returns what the caller saw: (outcome, text, route, model).
The retry rule lives in retry_rules.py; retry_rules_before.py is the version with the quota bug
(CHAT_SERVICE_RULES=before selects it; examples/apps/python/README.md).
"""
from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Callable

if os.environ.get("CHAT_SERVICE_RULES") == "before":
    import retry_rules_before as rules
else:
    import retry_rules as rules


@dataclass
class Route:
    name: str
    base_url: str
    dialect: str  # "openai" or "anthropic"
    model: str = "gpt-mock"


@dataclass
class Seen:
    outcome: str  # "success" or "error"
    text: str = ""
    route: str = ""
    model: str = ""
    output_tokens: int = 0  # the serving answer's usage: what a cost meter records


@dataclass
class Failure:
    status: int
    body: str
    retry_after_s: float | None


def _post(url: str, body: dict, headers: dict, timeout_s: float) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST",
                                 headers={"content-type": "application/json", **headers})
    with urllib.request.urlopen(req, timeout=timeout_s) as answer:
        return json.loads(answer.read())


def _call(route: Route, prompt: str, timeout_s: float, request_id: str) -> tuple[str, str, int]:
    """One attempt: (text, model, output tokens), or urllib's HTTPError / URLError / TimeoutError."""
    key = {"idempotency-key": request_id} if request_id else {}
    if route.dialect == "anthropic":
        got = _post(route.base_url + "/v1/messages",
                    {"model": route.model, "max_tokens": 64, "messages": [{"role": "user", "content": prompt}]},
                    {"x-api-key": "sk-example", "anthropic-version": "2023-06-01", **key}, timeout_s)
        return ("".join(b.get("text", "") for b in got.get("content", [])), got.get("model", ""),
                int(got.get("usage", {}).get("output_tokens", 0)))
    got = _post(route.base_url + "/chat/completions",
                {"model": route.model, "messages": [{"role": "user", "content": prompt}]},
                {"authorization": "Bearer sk-example", **key}, timeout_s)
    return (got["choices"][0]["message"]["content"] or "", got.get("model", ""),
            int(got.get("usage", {}).get("completion_tokens", 0)))


def _failure(e: Exception) -> Failure:
    if isinstance(e, urllib.error.HTTPError):
        after = e.headers.get("retry-after")
        return Failure(e.code, e.read().decode(errors="replace"), float(after) if after else None)
    return Failure(0, str(e), None)  # connection error or timeout


def classify(prompt: str, routes: list[Route], max_attempts: int = 3, deadline_s: float = 8.0,
             attempt_timeout_s: float = 2.0, request_id: str = "",
             sleep: Callable[[float], None] = time.sleep) -> Seen:
    """Primary first; each failure is retried on the same route or sent to the next one, as rules.decide says."""
    start, attempts = time.monotonic(), 0
    for route in routes:
        while attempts < max_attempts:
            attempts += 1
            try:
                text, model, tokens = _call(route, prompt, attempt_timeout_s, request_id)
                return Seen("success", text, route.name, model, tokens)
            except (urllib.error.URLError, TimeoutError, OSError) as e:
                failure = _failure(e)
            left_s = deadline_s - (time.monotonic() - start)
            action, wait_s = rules.decide(failure.status, failure.body, failure.retry_after_s, left_s)
            if action == "fail":
                return Seen("error")
            if action == "fallback":
                break
            sleep(wait_s)
    return Seen("error")
