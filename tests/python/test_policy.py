"""Unit tests of the Python policy loop's pure parts (examples/python/llmchaos_py/policy.py): the budget
taken from LLMCHAOS_POLICY_JSON, the classification of an HTTP error answer and of what the wire saw,
and SPEC section 3's decision, as examples/sdk/lib/hardened.mjs makes them."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "examples", "python"))

from llmchaos_py import wire  # noqa: E402
from llmchaos_py.contract import Route, TruncatedStream, read_env  # noqa: E402
from llmchaos_py.policy import Failure, budget_of, classify, classify_status, decide, retry_after_ms  # noqa: E402

POLICY = {"workflow": {"max_total_attempts": 3, "max_elapsed_ms": 8000, "attempt_timeout_ms": 3000, "replay_safe": True},
          "backoff": {"base_ms": 100, "cap_ms": 400},
          "routes": [{"name": "primary", "expected_latency_ms": 500}, {"name": "backup", "approved": False}]}


def headers(**h):
    h = {k.replace("_", "-"): v for k, v in h.items()}
    return lambda name: h.get(name)


def test_budget_takes_the_case_policy_scaled_with_a_timeout_floor():
    b = budget_of(POLICY, 0.5)
    assert (b.max_attempts, b.slo_ms, b.backoff_base_ms, b.backoff_cap_ms) == (3, 4000, 50, 200)
    assert b.attempt_timeout_ms == 2000  # 1500 scaled, raised to the 2 s floor
    assert b.replay_safe and b.expected_latency_ms("primary") == 250 and b.expected_latency_ms("other") == 150
    assert not b.approved("backup") and b.approved("primary")


def test_budget_defaults_without_a_policy():
    b = budget_of(None)
    assert (b.max_attempts, b.slo_ms, b.attempt_timeout_ms, b.replay_safe) == (2, 8000, 2000, False)


def test_retry_after_forms():
    assert retry_after_ms(headers(retry_after_ms="1500", retry_after="9")) == 1500
    assert retry_after_ms(headers(retry_after="9")) == 9000
    assert retry_after_ms(headers(retry_after="Thu, 01 Jan 1970 00:01:40 GMT"), now_s=90) == 10000
    assert retry_after_ms(headers()) is None
    assert retry_after_ms(headers(x_amz_retry_after="2500", retry_after="9")) == 2500  # Bedrock's, in ms


def test_classify_status_owners():
    assert classify_status(429, headers(), '{"error": {"code": "insufficient_quota"}}').owner == "quota"
    rate = classify_status(429, headers(retry_after="2"), '{"error": {"type": "rate_limit_error"}}')
    assert (rate.owner, rate.retry_after_ms) == ("rate", 2000)
    assert classify_status(429, headers(x_should_retry="false")).owner == "quota"
    assert classify_status(402, headers()).owner == "quota"
    assert classify_status(401, headers()).owner == "auth"
    assert (classify_status(500, headers()).owner, classify_status(500, headers()).commit) == ("unknown", "unknown")
    assert classify_status(500, headers(), "context length exceeded").owner == "request"
    assert classify_status(529, headers()).owner == "transient"
    assert classify_status(400, headers(), "blocked by the content policy").owner == "policy"
    assert classify_status(400, headers()).owner == "request"
    # Bedrock: the error type is in x-amzn-ErrorType; a spent service quota is a 400
    assert classify_status(400, headers(x_amzn_errortype="ServiceQuotaExceededException:http://")).owner == "quota"
    assert classify_status(400, headers(x_amzn_errortype="ValidationException")).owner == "request"


def test_classify_from_the_wire():
    a = wire.Attempt(response=(503, {"retry-after": "1"}), error_body=b'{"error": "overloaded"}')
    c = classify(RuntimeError("503"), a)
    assert (c.owner, c.retry_after_ms) == ("transient", 1000)
    # no headers: a reset is transient, a timeout or a silent close leaves the commit unknown
    reset = wire.Attempt(transport_error=ConnectionResetError(104, "Connection reset by peer"))
    assert classify(RuntimeError("x"), reset).owner == "transient"
    assert classify(RuntimeError("x"), wire.Attempt(transport_error=TimeoutError())).silent
    assert classify(RuntimeError("Server disconnected"), wire.Attempt()).silent
    # a 200 whose stream broke: committed once something was visible
    assert classify(TruncatedStream(0), wire.Attempt(response=(200, {}))).commit == "none"
    assert classify(RuntimeError("cut"), wire.Attempt(response=(200, {}), visible=5)).commit == "committed"


def decision(c, attempts=1, elapsed=0, budget=None, nxt=Route("backup", "", "openai"), rng=lambda: 0.5):
    return decide(c, attempts=attempts, budget=budget or budget_of(None), route=Route("primary", "", "openai"),
                  next_route=nxt, elapsed_ms=elapsed, retries_on_route=0, rng=rng)


def test_decide_in_spec_order():
    assert decision(Failure("quota", "none", "q")) == ("fallback", 0)
    assert decision(Failure("rate", "none", "r", 1000)) == ("retry", 1000)
    assert decision(Failure("rate", "none", "r", 20000)) == ("fallback", 0)  # the wait does not fit 8 s
    assert decision(Failure("transient", "none", "t"), attempts=2)[0] == "fail"
    assert decision(Failure("auth", "none", "a")) == ("fail", "owner auth")
    assert decision(Failure("transient", "committed", "cut")) == ("fail", "commit committed")
    assert decision(Failure("unknown", "unknown", "500")) == ("fail", "commit unknown")
    assert decision(Failure("transient", "none", "t"), rng=lambda: 0.5) == ("retry", 100)
    assert decision(Failure("quota", "none", "q"), nxt=None) == ("fail", "no route or time left")


def test_decide_retries_a_silence_only_when_replay_safe():
    silent = Failure("unknown", "unknown", "no headers", silent=True)
    assert decision(silent)[0] == "fail"
    assert decision(silent, budget=budget_of(POLICY))[0] == "retry"


def test_read_env_reads_the_exec_contract():
    env = read_env({"LLMCHAOS_REQUEST": '{"model": "m", "prompt": "p"}', "LLMCHAOS_PRIMARY": "primary",
                    "LLMCHAOS_FALLBACK": "backup-1", "LLMCHAOS_PRIMARY_BASE_URL": "http://a/v1",
                    "LLMCHAOS_PRIMARY_DIALECT": "openai", "LLMCHAOS_BACKUP_1_BASE_URL": "http://b",
                    "LLMCHAOS_BACKUP_1_DIALECT": "anthropic", "LLMCHAOS_OPERATION_ID": "op-1"})
    assert env.primary.base_url == "http://a/v1" and env.fallbacks[0].dialect == "anthropic"
    assert env.headers == {"Idempotency-Key": "op-1"} and env.policy is None
    assert [r.name for r in env.routes(["anthropic"])] == ["backup-1"]
