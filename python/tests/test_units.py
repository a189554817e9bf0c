"""Pure pieces of llmchaostest, no server: the failure message, the reports of several servers as one
run, case path resolution, the binary lookup's errors."""
from pathlib import Path

import pytest

from llmchaostest import BinaryNotFound, Verdict, find_binary
from llmchaostest.plugin import _one_run, _resolve

FAILED = {
    "verdict": "fail", "case": "quota falls back", "file": "cases/q.toml", "expected": "fallback", "observed": "retry",
    "actions": ["retry"],
    "checks": [{"name": "action", "passed": False, "message": "expected fallback, observed retry"},
               {"name": "no_truncated_success", "passed": True, "message": ""},
               {"name": "no_hammering", "passed": False, "message": "primary: 2 attempts within 8000 ms"}],
}


def test_the_message_names_the_case_and_each_failed_check_only():
    v = Verdict(FAILED)
    assert not v.passed
    assert [c["name"] for c in v.failed_checks] == ["action", "no_hammering"]
    assert v.message().splitlines() == [
        'llmchaos case "quota falls back" (cases/q.toml): fail: expected fallback, observed retry',
        "  check action failed: expected fallback, observed retry",
        "  check no_hammering failed: primary: 2 attempts within 8000 ms",
        "  actions: retry",
    ]


def test_reports_of_several_servers_are_one_run_with_distinct_names():
    a = {"driver": "session", "catalog": "x", "catalog_cases": 2, "cases": [{"name": "one"}, {"name": "two"}]}
    b = {"driver": "session", "catalog": "y", "catalog_cases": 1, "cases": [{"name": "one"}]}
    run = _one_run([a, b])
    assert [c["name"] for c in run["cases"]] == ["one", "two", "one (server 2)"]
    assert run["catalog_cases"] == 3 and run["catalog"] not in ("x", "y")
    assert _one_run([a]) is a  # one server: its report as it is


def test_a_case_path_is_found_beside_the_test_then_under_the_root(tmp_path):
    near, root = tmp_path / "tests", tmp_path
    near.mkdir()
    (root / "cases").mkdir()
    (root / "cases" / "c.toml").write_text("")
    assert _resolve("cases/c.toml", near, root) == root / "cases" / "c.toml"
    (near / "cases").mkdir()
    (near / "cases" / "c.toml").write_text("")
    assert _resolve("cases/c.toml", near, root) == near / "cases" / "c.toml"
    assert _resolve(Path("/abs/c.toml"), near, root) == Path("/abs/c.toml")


def test_a_named_binary_that_is_not_executable_is_refused(tmp_path):
    plain = tmp_path / "llmchaos"
    plain.write_text("")
    with pytest.raises(BinaryNotFound, match="not an executable file"):
        find_binary(str(plain))
