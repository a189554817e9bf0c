"""llmchaostest.containers against the image: LLMCHAOS_TEST_IMAGE (default llmchaos:dev, scripts/image).
Skips without testcontainers (the extra [containers]), without a Docker daemon or without the image.
Run by CTest container_python (tests/container/python.sh) with TESTCONTAINERS_RYUK_DISABLED=true."""
import json
import os
import urllib.error
import urllib.request

import pytest

testcontainers = pytest.importorskip("testcontainers")
docker = pytest.importorskip("docker")

pytest_plugins = ["pytester"]

IMAGE = os.environ.get("LLMCHAOS_TEST_IMAGE", "llmchaos:dev")

POLICY = '''[workflow]
primary = "primary"
fallback = ["backup"]
max_total_attempts = 3
'''

QUOTA_CASE = '''name = "container test: quota {n} falls back"
policy = "../policies/one-fallback.toml"
expect = "fallback"
expect_outcome = "fallback_recovery"
expect_attempts = {{ primary = 1, backup = 1 }}

[route.primary]
dialect = "openai"
script = [{{ fault = "quota_429" }}]

[route.backup]
dialect = "openai"
'''

# The same case, self-contained: sent as TOML text when it is outside the mounted folder.
QUOTA_CASE_INLINE = QUOTA_CASE.replace('policy = "../policies/one-fallback.toml"\n', "") + "\n" + POLICY


def chat(base_url, key):
    req = urllib.request.Request(base_url + "/chat/completions", method="POST",
                                 data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode(),
                                 headers={"content-type": "application/json", "authorization": "Bearer k",
                                          "idempotency-key": key})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, None


def run_client(case, retry_quota):
    """A client that falls back on a quota 429 (hardened) or retries it (naive)."""
    status, body = chat(case.base_url("primary"), case.operation_id)
    route = "primary"
    if status == 429 and retry_quota:
        status, body = chat(case.base_url("primary"), case.operation_id)
    elif status == 429:
        route = "backup"
        status, body = chat(case.base_url("backup"), case.operation_id)
    if status != 200:
        return case.finish(outcome="error")
    return case.finish(outcome="success", route=route, text=body["choices"][0]["message"]["content"])


def _image_or_skip():
    try:
        client = docker.from_env()
        client.ping()
    except Exception as e:
        pytest.skip(f"no Docker daemon answers ({e})")
    try:
        client.images.get(IMAGE)
    except docker.errors.ImageNotFound:
        pytest.skip(f"image {IMAGE} not found (scripts/image builds it)")
    finally:
        client.close()


@pytest.fixture(scope="module")
def cases(tmp_path_factory):
    root = tmp_path_factory.mktemp("cases")
    (root / "policies").mkdir()
    (root / "policies" / "one-fallback.toml").write_text(POLICY)
    (root / "chat").mkdir()
    for n in ("a", "b"):
        (root / "chat" / f"quota-{n}.toml").write_text(QUOTA_CASE.format(n=n))
    os.chmod(root, 0o755)  # the image's user (uid 65532) reads the mount
    return root


@pytest.fixture(scope="module")
def llmchaos(cases):
    _image_or_skip()
    from llmchaostest.containers import LlmchaosContainer
    with LlmchaosContainer(IMAGE, cases=cases) as container:
        yield container


def _raw(url, method="GET", body=None, headers=None):
    req = urllib.request.Request(url, method=method, data=None if body is None else json.dumps(body).encode(),
                                 headers={"content-type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_ready_answers_without_the_token(llmchaos):
    status, body = _raw(llmchaos.url + "/__llmchaos/ready")
    assert status == 200 and json.loads(body)["status"] == "ready"
    host = llmchaos.get_container_host_ip()  # 127.0.0.1 (docker_host mode); the gateway's IP inside a container
    assert llmchaos.url == f"http://{'127.0.0.1' if host == 'localhost' else host}:{llmchaos.get_exposed_port(8080)}"


def test_the_session_api_refuses_without_the_token_or_with_a_wrong_one(llmchaos):
    for headers in ({}, {"authorization": "Bearer " + "0" * 64}):
        status, body = _raw(llmchaos.url + "/__llmchaos/sessions", "POST", {"case_path": "chat/quota-a.toml"}, headers)
        assert status == 401, (headers, status, body)
        assert "error" in json.loads(body)
    status, _ = _raw(llmchaos.url + "/__llmchaos/sessions", "POST", {"case_path": "chat/quota-a.toml"},
                     {"authorization": "Bearer " + llmchaos.token})
    assert status in (200, 201)


def test_the_token_is_generated_per_container_and_passed_in_its_environment(llmchaos):
    assert len(llmchaos.token) == 64
    env = llmchaos.get_wrapped_container().attrs["Config"]["Env"]
    assert f"LLMCHAOS_ADMIN_TOKEN={llmchaos.token}" in env
    assert llmchaos.headers() == {"authorization": f"Bearer {llmchaos.token}"}


def test_a_hardened_client_passes_and_a_naive_one_fails(llmchaos, cases):
    from llmchaostest import CaseFailed
    with llmchaos.case(cases / "chat" / "quota-a.toml") as case:
        assert case.base_url("primary").startswith(llmchaos.url)  # reachable through the port mapping
        verdict = run_client(case, retry_quota=False)
    assert verdict.passed and verdict.observed == "fallback"
    with pytest.raises(CaseFailed, match=r'"container test: quota b falls back".*fail: expected fallback, observed retry'):
        with llmchaos.case(cases / "chat" / "quota-b.toml") as case:
            verdict = run_client(case, retry_quota=True)
    assert not verdict.passed and verdict.failed_checks


def test_a_case_outside_the_mounted_folder_goes_as_its_toml_text(llmchaos, tmp_path):
    outside = tmp_path / "outside.toml"
    outside.write_text(QUOTA_CASE_INLINE.format(n="outside"))
    with llmchaos.case(outside) as case:
        assert run_client(case, retry_quota=False).passed


def test_reports_are_copied_out_of_the_container(llmchaos, tmp_path):
    answer = llmchaos.write_reports(tmp_path / "report")
    for name in ("junit.xml", "report.json", "report.md", "report.html"):
        assert (tmp_path / "report" / name).stat().st_size > 0, name
    assert answer["dir"] == str(tmp_path / "report")
    report = json.loads((tmp_path / "report" / "report.json").read_text())
    names = {c["name"] for c in report["cases"]}
    assert "container test: quota a falls back" in names and "container test: quota b falls back" in names


def test_cases_copied_in_instead_of_mounted(cases):
    _image_or_skip()
    from llmchaostest.containers import LlmchaosContainer
    with LlmchaosContainer(IMAGE, cases=cases, copy_cases=True, time_scale=0.5) as container:
        with container.case(cases / "chat" / "quota-a.toml") as case:
            assert run_client(case, retry_quota=False).passed
        container_id = container.get_container_id()
    with pytest.raises(docker.errors.NotFound):  # stopped and removed at the end, Ryuk or not
        docker.from_env().containers.get(container_id)


def test_the_plugin_runs_its_server_from_the_image(pytester, cases):
    _image_or_skip()
    pytester.makepyfile(client=f"import json, urllib.request, urllib.error\n{_source(chat)}\n{_source(run_client)}")
    (pytester.path / "cases").symlink_to(cases, target_is_directory=True)
    pytester.makepyfile(test_m='''
import pytest
from client import run_client

@pytest.mark.llmchaos_cases("cases/chat")
def test_each(llmchaos, llmchaos_case_path):
    assert llmchaos.server.token  # a container's own
    with llmchaos.case(llmchaos_case_path) as case:
        run_client(case, retry_quota=llmchaos_case_path.stem == "quota-b")
''')
    result = pytester.runpytest("-p", "no:cacheprovider", "--llmchaos-docker", IMAGE,
                                "--llmchaos-cases-root", str(cases))
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*FAILED test_m.py::test_each[[]quota-b[]]*"])


def _source(fn):
    import inspect
    return inspect.getsource(fn)
