"""The "hardened" client's policy loop: the library's own retries off, every attempt the team's decision,
made once per failure in the order of SPEC section 3 (as examples/sdk/lib/hardened.mjs's runPolicy):
  1. a request / auth / policy error fails closed;
  2. anything that may have been committed fails closed: visible tokens already streamed, or a timeout /
     a silent close before the response headers (unless the workflow is replay-safe);
  3. an unknown owner (a bare 500) fails closed (no queue);
  4. transient or rate: retry on the same route when an attempt is left and the wait (Retry-After, else
     exponential backoff with full jitter) + the route's expected latency fit the time left;
  5. else transient / rate / quota go to the next approved route when an attempt is left;
  6. else fail closed.
A quota 429 (`insufficient_quota`, a 429 naming the quota / billing, any 402, `x-should-retry: false`)
is never retried on the same route, nor is Bedrock's ServiceQuotaExceededException (a 400). The budget is the case's policy (LLMCHAOS_POLICY_JSON) when the
harness passes it, else POLICY, times LLMCHAOS_SDK_TIME_SCALE. One loop for every Python library: what
differs per library is one call (`attempt`); the failure is classified from what the wire saw (wire.py)
and the chat functions' own TruncatedStream / ContentFiltered.
"""
from __future__ import annotations

import email.utils
import errno
import random
import re
import sys
import time
from dataclasses import dataclass
from typing import Callable

from . import wire as wiremod
from .contract import ContentFiltered, Env, Route, TruncatedStream, describe, finish, read_env, report

POLICY = {
    "max_attempts": 2,  # per request, every route and every layer
    "slo_ms": 8000,  # the request's time budget
    "attempt_timeout_ms": 2000,  # to the response headers, and between two reads of the body
    "expected_latency_ms": 300,  # what one more attempt is expected to take
    "backoff_base_ms": 200,  # exponential, full jitter
    "backoff_cap_ms": 2000,
}
# Under a small --time-scale the scaled attempt timeout would be shorter than a busy machine takes to
# answer over loopback: a floor of 2 s real.
ATTEMPT_TIMEOUT_FLOOR_MS = 2000
QUOTA_TEXT = re.compile(r"insufficient_quota|quota|billing|credit", re.I)


@dataclass
class Budget:
    max_attempts: int
    slo_ms: float
    attempt_timeout_ms: float
    backoff_base_ms: float
    backoff_cap_ms: float
    replay_safe: bool
    latency_ms: dict
    approvals: dict

    def expected_latency_ms(self, name: str) -> float:
        return self.latency_ms.get(name, self.latency_ms[""])

    def approved(self, name: str) -> bool:
        return self.approvals.get(name, True)


def _num(v, fallback):
    return v if isinstance(v, (int, float)) and not isinstance(v, bool) else fallback


def budget_of(policy: dict | None, scale: float = 1.0) -> Budget:
    """The budget the loop keeps: `policy` the case's policy JSON (or None: POLICY), times in ms, scaled."""
    w = (policy or {}).get("workflow", {})
    b = (policy or {}).get("backoff", {})
    routes = {r.get("name"): r for r in (policy or {}).get("routes", [])}
    latency = {n: _num(r.get("expected_latency_ms"), POLICY["expected_latency_ms"]) * scale for n, r in routes.items()}
    latency[""] = POLICY["expected_latency_ms"] * scale
    return Budget(
        max_attempts=int(_num(w.get("max_total_attempts"), POLICY["max_attempts"])),
        slo_ms=_num(w.get("max_elapsed_ms"), POLICY["slo_ms"]) * scale,
        attempt_timeout_ms=max(_num(w.get("attempt_timeout_ms"), POLICY["attempt_timeout_ms"]) * scale,
                               ATTEMPT_TIMEOUT_FLOOR_MS),
        backoff_base_ms=_num(b.get("base_ms"), POLICY["backoff_base_ms"]) * scale,
        backoff_cap_ms=_num(b.get("cap_ms"), POLICY["backoff_cap_ms"]) * scale,
        replay_safe=w.get("replay_safe") is True,
        latency_ms=latency,
        approvals={n: r.get("approved") is not False for n, r in routes.items()},
    )


@dataclass
class Failure:
    """owner: transient | rate | quota | request | auth | policy | unknown; commit: none | committed | unknown."""

    owner: str
    commit: str
    why: str
    retry_after_ms: float | None = None
    silent: bool = False


def silent(why: str) -> Failure:
    """The request was sent and no byte came back (a timeout, a close): the commit state is unknown."""
    return Failure("unknown", "unknown", why, silent=True)


def streamed(what: str, visible: int) -> Failure:
    return Failure("transient", "committed" if visible > 0 else "none", what)


def retry_after_ms(header: Callable[[str], str | None], now_s: float | None = None) -> float | None:
    """The server's delay: retry-after-ms (Bedrock: x-amz-retry-after), else retry-after in seconds or as an
    HTTP date."""
    try:
        ms = float(header("retry-after-ms") or header("x-amz-retry-after") or "")
        if ms >= 0:
            return ms
    except ValueError:
        pass
    value = header("retry-after")
    if value is None:
        return None
    try:
        return float(value) * 1000
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, (when - (time.time() if now_s is None else now_s)) * 1000)


def classify_status(status: int, header: Callable[[str], str | None], body: str = "", code: str | None = None) -> Failure:
    """An HTTP error answer: its status, headers and body text."""
    should_retry = header("x-should-retry")
    ra = retry_after_ms(header)
    if status == 402:
        return Failure("quota", "none", "402")
    if (header("x-amzn-errortype") or "").startswith("ServiceQuotaExceededException"):
        return Failure("quota", "none", f"{status} ServiceQuotaExceededException")
    if status == 429:
        if code == "insufficient_quota" or QUOTA_TEXT.search(body) or should_retry == "false":
            return Failure("quota", "none", "quota 429")
        return Failure("rate", "none", "rate 429", ra)
    if status in (401, 403):
        return Failure("auth", "none", str(status))
    if status == 500:
        if re.search(r"context|too long|input", body, re.I):
            return Failure("request", "none", "500 naming the input")
        return Failure("unknown", "unknown", "bare 500")
    if status in (408, 409) or status >= 500:
        if should_retry == "false":
            return Failure("quota", "none", f"{status}, x-should-retry false")
        return Failure("transient", "none", str(status), ra)
    if re.search(r"content.?(filter|policy)|refus|safety", body, re.I):
        return Failure("policy", "none", str(status))
    return Failure("request", "none", str(status))


def _is_timeout(err: BaseException | None) -> bool:
    return any("Timeout" in type(e).__name__ or isinstance(e, TimeoutError) for e in wiremod.cause_chain(err))


def _is_errno(err: BaseException | None, number: int, text: str) -> bool:
    return any(getattr(e, "errno", None) == number or text in str(e) for e in wiremod.cause_chain(err))


def classify(err: BaseException, a: wiremod.Attempt) -> Failure:
    """A failed attempt, from our own exceptions and what the wire saw (`a`), whatever the library."""
    if isinstance(err, ContentFiltered):
        return Failure("policy", "none", str(err))
    if isinstance(err, TruncatedStream):
        return streamed("stream ended early", a.visible)
    if a.response is None:
        t = a.transport_error or err
        if _is_timeout(t):
            return silent("no response headers in time")
        if _is_errno(t, errno.ECONNREFUSED, "Connection refused"):
            return Failure("transient", "none", "refused")
        # A reset right after the request: nothing was answered and the server said so (RST). Any other
        # close before a response byte (a silent hold that ended) leaves the commit state unknown.
        if _is_errno(t, errno.ECONNRESET, "Connection reset"):
            return Failure("transient", "none", "reset before any byte")
        return silent(str(t)[:120] or type(t).__name__)
    status = a.response[0]
    if status >= 400:
        body = a.error_body.decode("utf-8", "replace") + " " + str(err)
        return classify_status(status, a.header, body)
    # A 200 whose body broke, carried an error event or did not parse: what was visible decides.
    what = "idle timeout after the headers" if _is_timeout(a.body_error) else (str(err)[:120] or type(err).__name__)
    return streamed(what, a.visible)


def decide(c: Failure, *, attempts: int, budget: Budget, route: Route, next_route: Route | None,
           elapsed_ms: float, retries_on_route: int, rng=random.random):
    """SPEC section 3's decision for one failure: ("retry", wait_ms) | ("fallback", 0) | ("fail", why)."""
    if c.silent and budget.replay_safe:
        c = Failure("transient", "none", f"{c.why}, replay-safe")
    if c.owner in ("request", "auth", "policy"):
        return ("fail", f"owner {c.owner}")
    if c.commit != "none":
        return ("fail", f"commit {c.commit}")
    if c.owner == "unknown":
        return ("fail", "owner unknown, no queue")
    left = budget.max_attempts - attempts
    time_left = budget.slo_ms - elapsed_ms
    if left > 0 and c.owner in ("transient", "rate"):
        backoff = rng() * min(budget.backoff_cap_ms, budget.backoff_base_ms * 2 ** retries_on_route)
        wait = max(c.retry_after_ms or 0, backoff)
        if time_left >= wait + budget.expected_latency_ms(route.name):
            return ("retry", wait)
    if left > 0 and next_route is not None and time_left >= budget.expected_latency_ms(next_route.name):
        return ("fallback", 0)
    return ("fail", "no route or time left" if left > 0 else "attempts exhausted")


class Hooks:
    """What an attempt gets: the scaled attempt timeout (seconds) and the stream callbacks."""

    def __init__(self, a: wiremod.Attempt, timeout_s: float):
        self.attempt, self.timeout_s = a, timeout_s

    def on_open(self) -> None:
        self.attempt.opened = True

    def on_text(self, text: str) -> None:
        self.attempt.visible += len(text)


def run_policy(routes: list[Route], attempt: Callable[[Route, Hooks], dict], env: Env | None = None) -> None:
    """The loop: `attempt(route, hooks)` makes one call without retries of its own and returns
    {text, model, output_tokens[, filtered, finish_reason]}; it reports and exits the process."""
    env = env or read_env()
    budget = budget_of(env.policy, env.time_scale)
    routes = [r for k, r in enumerate(routes) if k == 0 or budget.approved(r.name)]
    if not routes:
        raise SystemExit("no route of this case speaks a dialect this client has")
    w = wiremod.install(budget.attempt_timeout_ms / 1000)
    idx = attempts = retries_on_route = 0
    while True:
        route = routes[idx]
        attempts += 1
        a = w.new_attempt()
        try:
            answer = attempt(route, Hooks(a, budget.attempt_timeout_ms / 1000))
            if a.body_broken:  # a library that ends a broken body quietly returned a truncated answer
                raise TruncatedStream(a.visible)
            if answer.get("filtered"):
                raise ContentFiltered(answer.get("finish_reason", ""))
        except Exception as err:  # noqa: BLE001 - every library error is classified, none escapes
            c = classify(err, a)
            print(f"{route.name} attempt {attempts}: {describe(err)} -> owner {c.owner}, commit {c.commit} ({c.why})",
                  file=sys.stderr)
            nxt = routes[idx + 1] if idx + 1 < len(routes) else None
            action, arg = decide(c, attempts=attempts, budget=budget, route=route, next_route=nxt,
                                 elapsed_ms=w.elapsed_s() * 1000, retries_on_route=retries_on_route)
            if action == "retry":
                print(f"retry on {route.name} in {round(arg)} ms", file=sys.stderr)
                retries_on_route += 1
                time.sleep(arg / 1000)
                continue
            if action == "fallback":
                idx, retries_on_route = idx + 1, 0
                print(f"fall back to {routes[idx].name}", file=sys.stderr)
                continue
            print(f"fail closed: {arg}", file=sys.stderr)
            report("fail_closed", text="")
            finish(1)
        outcome = "fallback_recovery" if idx > 0 else "retry_recovery" if attempts > 1 else "primary_success"
        fields = {k: v for k, v in answer.items() if k in ("text", "model", "output_tokens")}
        report(outcome, route=route.name, **fields)
        finish(0)


def run_plain(call: Callable[[Env], dict]) -> None:
    """The "default" client: the library's defaults, one call; an error goes to the caller."""
    env = read_env()
    try:
        answer = call(env)
    except Exception as err:  # noqa: BLE001 - the caller sees any error as a failure
        print(f"{env.primary.name}: {describe(err)}", file=sys.stderr)
        report("error", text="")
        finish(1)
    fields = {k: v for k, v in answer.items() if k in ("text", "model", "output_tokens", "route")}
    report("success", **fields)
    finish(0)
