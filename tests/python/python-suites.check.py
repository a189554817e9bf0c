"""Asserts the verdicts python_suites expects of the Python targets (run-python-suites-test.sh), each a
behaviour the full suites showed (examples/README.md, "Python clients"):
  - openai-python with its defaults retries a quota 429 twice (3 attempts, x-stainless-retry-count 0, 1,
    2) against a budget of 2, and never reaches the healthy backup (FAIL); a 503 in a case allowing 3
    attempts is retried twice (pass);
  - google-genai retries nothing by default: a per-minute 429 goes to the caller after 1 attempt (FAIL);
    the hardened genai client retries it (pass);
  - LangChain's default (max_retries 2 in the SDK, with_fallbacks) sends the quota 429 three times, then
    falls back (FAIL on the budget);
  - the hardened clients (one shared policy loop) send the quota 429 once and go to the backup (pass,
    1 + 1), and keep the case's own budget (LLMCHAOS_POLICY_JSON): 3 attempts where it allows 3.
    python tests/python/python-suites.check.py OUT
"""
import json
import pathlib
import sys

OUT = pathlib.Path(sys.argv[1])
QUOTA = "examples/cases/openai/quota-429-falls-back.toml"
THREE = "cases/faults/openai/overloaded-503-retried-twice.toml"
GEMINI_RATE = "cases/faults/gemini/rate-429-streamed-retried.toml"


def at(c):
    a = c["attempts_by_route"]
    return f"{a.get('primary', 0)}+{a.get('backup', 0)}"


def check_failed(c, name):
    return any(k["name"] == name and not k["ok"] for k in c.get("checks", []))


def retry_counts(c):
    return [e.get("x_stainless_retry_count") for e in c.get("ledger", []) if e["route"] == "primary"]


def passes(observed, attempts):
    return lambda c: c["verdict"] == "pass" and c["observed"] == observed and at(c) == attempts


EXPECT = {
    "py-openai-default": {
        QUOTA: lambda c: c["verdict"] == "fail" and at(c) == "3+0" and check_failed(c, "max_total_attempts")
        and retry_counts(c) == ["0", "1", "2"],
        THREE: passes("retry", "3+0"),
    },
    "py-openai-hardened": {QUOTA: passes("fallback", "1+1"), THREE: passes("retry", "3+0")},
    "py-genai-default": {GEMINI_RATE: lambda c: c["verdict"] == "fail" and c["observed"] == "fail_closed" and at(c) == "1+0"},
    "py-genai-hardened": {GEMINI_RATE: passes("retry", "2+0")},
    "py-langchain-default": {
        QUOTA: lambda c: c["verdict"] == "fail" and at(c) == "3+1" and check_failed(c, "max_total_attempts"),
    },
    "py-pydantic-ai-hardened": {QUOTA: passes("fallback", "1+1"), THREE: passes("retry", "3+0")},
    "py-litellm-router-hardened": {QUOTA: passes("fallback", "1+1"), THREE: passes("retry", "3+0")},
}

good = bad = 0
for target, cases in EXPECT.items():
    report = json.loads((OUT / target / "report.json").read_text())
    if not report["label"].startswith(f"{target} ("):
        bad += 1
        print(f"BAD  {target}: label {report['label']}")
    for file, ok in cases.items():
        c = next((x for x in report["cases"] if x["file"] == file), None)
        line = (f"{c['verdict']} {c['observed']} {json.dumps(c['attempts_by_route'])} {c.get('unknown_reason', '')}"
                if c else "not run")
        result = bool(c and ok(c))
        good, bad = good + result, bad + (not result)
        print(f"{'ok  ' if result else 'BAD '} {target} {file}: {line}")
print(f"python-suites.check: {good} passed, {bad} failed")
sys.exit(1 if bad else 0)
