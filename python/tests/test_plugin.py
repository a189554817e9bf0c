"""The plugin itself under pytester: the marker's ids, its errors, a block left without finish, the
checker's messages in a failure, and one server per xdist worker with the reports merged. Needs the
llmchaos binary (the installed wheel's, LLMCHAOS_BIN or PATH); run by CTest python_plugin_example."""
import json

import pytest

pytest_plugins = ["pytester"]

QUOTA_CASE = '''name = "plugin test: quota {n} falls back"
expect = "fallback"
expect_outcome = "fallback_recovery"
expect_attempts = {{ primary = 1, backup = 1 }}

[workflow]
primary = "primary"
fallback = ["backup"]
max_total_attempts = 3

[route.primary]
dialect = "openai"
script = [{{ fault = "quota_429" }}]

[route.backup]
dialect = "openai"
'''

CLIENT = '''
import json, urllib.request, urllib.error

def chat(base_url, key):
    req = urllib.request.Request(base_url + "/chat/completions", method="POST",
        data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode(),
        headers={"content-type": "application/json", "authorization": "Bearer k", "idempotency-key": key})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, None

def run_client(case, retry_quota):
    status, _ = chat(case.base_url("primary"), case.operation_id)
    if status == 429 and retry_quota:
        status, body = chat(case.base_url("primary"), case.operation_id)
        return case.finish(outcome="success", route="primary", text=body["choices"][0]["message"]["content"])
    status, body = chat(case.base_url("backup"), case.operation_id)
    return case.finish(outcome="success", route="backup", text=body["choices"][0]["message"]["content"])
'''


@pytest.fixture
def cases(pytester):
    folder = pytester.mkdir("cases")
    for n in ("a", "b", "c", "d"):
        (folder / f"quota-{n}.toml").write_text(QUOTA_CASE.format(n=n))
    pytester.makepyfile(client=CLIENT)
    return folder


def test_marker_gives_one_id_per_case(pytester, cases):
    pytester.makepyfile(test_m='''
import pytest
@pytest.mark.llmchaos_cases("cases")
def test_each(llmchaos_case_path):
    pass
''')
    result = pytester.runpytest("--collect-only", "-q")
    result.stdout.fnmatch_lines(["test_m.py::test_each[[]quota-a[]]", "test_m.py::test_each[[]quota-d[]]"])
    assert result.ret == 0


def test_marker_on_an_empty_folder_says_so(pytester):
    pytester.mkdir("nothing")
    pytester.makepyfile(test_m='''
import pytest
@pytest.mark.llmchaos_cases("nothing")
def test_each(llmchaos_case_path):
    pass
''')
    result = pytester.runpytest()
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*no case files (*.toml) in *nothing*"])


def test_failures_carry_the_checkers_messages(pytester, cases):
    pytester.makepyfile(test_m='''
import pytest
from client import run_client

@pytest.mark.llmchaos_cases("cases")
def test_retrying(llmchaos, llmchaos_case_path):
    with llmchaos.case(llmchaos_case_path) as case:
        run_client(case, retry_quota=llmchaos_case_path.stem == "quota-a")

def test_no_finish(llmchaos):
    with llmchaos.case("cases/quota-b.toml"):
        pass
''')
    result = pytester.runpytest("-p", "no:cacheprovider")
    result.assert_outcomes(passed=3, failed=2)
    result.stdout.fnmatch_lines([
        "*CaseFailed: llmchaos case \"plugin test: quota a falls back\"*: fail: expected fallback, observed retry*",
        "*check action failed: *",
        "*the block ended without case.finish(outcome=...): nothing was judged*",
    ])


def test_one_server_per_xdist_worker_and_one_report(pytester, cases, tmp_path, monkeypatch):
    pytest.importorskip("xdist")
    pytester.makepyfile(test_m='''
import os
import pytest
from client import run_client

@pytest.mark.llmchaos_cases("cases")
def test_each(llmchaos, llmchaos_case_path):
    with llmchaos.case(llmchaos_case_path) as case:
        run_client(case, retry_quota=False)
    with open(os.environ["SERVERS_LOG"], "a") as f:
        f.write(os.environ.get("PYTEST_XDIST_WORKER", "main") + " " + llmchaos.url + "\\n")
''')
    servers = tmp_path / "servers.log"
    monkeypatch.setenv("SERVERS_LOG", str(servers))
    report = tmp_path / "report"
    result = pytester.runpytest("-p", "no:cacheprovider", "-n", "2", "--llmchaos-report", str(report))
    result.assert_outcomes(passed=4)
    workers = {}
    for line in servers.read_text().splitlines():
        worker, url = line.split()
        workers.setdefault(worker, set()).add(url)
    assert len(workers) == 2 and all(len(urls) == 1 for urls in workers.values())
    assert len({u for urls in workers.values() for u in urls}) == 2  # a server of its own per worker
    result.stdout.fnmatch_lines(["*llmchaos: reports of 2 server(s) written to*"])
    merged = json.loads((report / "report.json").read_text())
    assert sorted(c["name"] for c in merged["cases"]) == [f"plugin test: quota {n} falls back" for n in "abcd"]
    for f in ("junit.xml", "report.md", "report.html"):
        assert (report / f).stat().st_size > 0
