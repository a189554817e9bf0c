"""Pure pieces of llmchaostest, no server: the failure message, the reports of several servers as one
run, case path resolution, the binary lookup's errors."""
import json
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


class _Recorder:
    """A stand-in for the server's session API on loopback: records each request, answers a session."""

    def __init__(self):
        import http.server
        import threading
        self.seen = []
        recorder = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("content-length", 0))).decode()
                recorder.seen.append((self.path, dict((k.lower(), v) for k, v in self.headers.items()), body))
                answer = b'{"id": "s1", "routes": {}}'
                self.send_response(200)
                self.send_header("content-length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"


@pytest.fixture
def recorder():
    r = _Recorder()
    yield r
    r.httpd.shutdown()


def test_a_case_under_the_cases_root_goes_by_relative_path_others_as_toml_text(tmp_path, recorder):
    from llmchaostest import SessionClient
    root, elsewhere = tmp_path / "root", tmp_path / "elsewhere"
    (root / "chat").mkdir(parents=True)
    elsewhere.mkdir()
    (root / "chat" / "q.toml").write_text('name = "q"\n')
    (elsewhere / "o.toml").write_text('name = "outside"\n')
    client = SessionClient()
    client.url, client.token, client.cases_dir = recorder.url, "s3cret", root.resolve()
    client.case(root / "chat" / "q.toml")
    client.case(elsewhere / "o.toml")
    (path1, h1, b1), (path2, h2, b2) = recorder.seen
    assert path1 == path2 == "/__llmchaos/sessions"
    assert h1["authorization"] == h2["authorization"] == "Bearer s3cret"
    assert json.loads(b1) == {"case_path": "chat/q.toml"} and h1["content-type"] == "application/json"
    assert b2 == 'name = "outside"\n' and h2["content-type"] == "application/toml"
    with pytest.raises(FileNotFoundError):
        client.case(root / "missing.toml")


def test_no_token_no_authorization_header_and_absolute_paths_without_a_root(tmp_path, recorder):
    from llmchaostest import SessionClient
    (tmp_path / "c.toml").write_text("")
    client = SessionClient()
    client.url = recorder.url
    client.case(tmp_path / "c.toml")
    (_, headers, body), = recorder.seen
    assert "authorization" not in headers
    assert json.loads(body) == {"case_path": str((tmp_path / "c.toml").resolve())}


def test_the_plugins_cases_root_is_the_common_parent_of_rootdir_and_case_folders(tmp_path):
    from types import SimpleNamespace
    from llmchaostest.plugin import cases_root
    app = tmp_path / "apps" / "python"
    app.mkdir(parents=True)
    config = SimpleNamespace(getoption=lambda name: None, getini=lambda name: "", rootpath=app,
                             _llmchaos_case_folders={tmp_path / "apps" / "cases" / "chat"})
    assert cases_root(config) == tmp_path / "apps"  # the folder's parent: its ../policies come along
    config._llmchaos_case_folders = set()
    assert cases_root(config) == app
    config._llmchaos_case_folders = {Path("/")}
    assert cases_root(config) == app  # never the filesystem's root
    config.rootpath = Path("/elsewhere/report")  # pytest took an option's existing path for its rootdir
    config._llmchaos_case_folders = {tmp_path / "apps" / "cases" / "chat"}
    assert cases_root(config) == tmp_path / "apps" / "cases"
    config.inipath = app / "pytest.ini"  # the ini file's folder wins over a rootdir pytest moved up
    config.rootpath = tmp_path.parent
    assert cases_root(config) == tmp_path / "apps"
    del config.inipath
    config.invocation_params = SimpleNamespace(dir=app)  # no ini file: the folder pytest started in
    assert cases_root(config) == tmp_path / "apps"
    del config.invocation_params
    config.rootpath = app
    config.getini = lambda name: "sub" if name == "llmchaos_cases_root" else ""
    assert cases_root(config) == app / "sub"
