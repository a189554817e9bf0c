#!/usr/bin/env python3
"""A case served from the container, judged through its session API with the token: the same small
client (tests/harness/exec_client.py) once hardened (primary once, then the fallback) and once naive
(EXEC_CLIENT_MODE=retry: every route twice), on the quota case. The naive client must fail, the
hardened one pass; without the token the session API must answer 401 and open nothing.

usage: judge_in_container.py BASE_URL TOKEN SOURCE_DIR"""
import json, os, subprocess, sys, tempfile, urllib.error, urllib.request

base, token, source = sys.argv[1], sys.argv[2], sys.argv[3]
client = os.path.join(source, "tests/harness/exec_client.py")
case = "staging/quota-429-falls-back.toml"  # below the container's /cases (its --cases-root)


def call(method, path, body=None, auth=True):
    headers = {"content-type": "application/json"}
    if auth:
        headers["authorization"] = f"Bearer {token}"
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(base + path, data, method=method, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read() or b"{}")


def judge(mode):
    status, s = call("POST", "/__llmchaos/sessions", {"case_path": case})
    assert status == 201, (status, s)
    base_urls = [r["base_url"] for r in s["routes"].values()]
    assert all(u.startswith(base + "/") for u in base_urls), f"base URLs not reachable from here: {base_urls}"
    seen = []
    with tempfile.TemporaryDirectory() as state:
        env = dict(os.environ, EXEC_CLIENT_MODE=mode, LLMCHAOS_STATE_DIR=state)
        env.update(var.split("=", 1) for var in s["environment"])
        for op in s["operation_ids"]:
            env.update(LLMCHAOS_REQUEST=json.dumps(dict(s["request"], operation_id=op)), LLMCHAOS_OPERATION_ID=op)
            out = subprocess.run([sys.executable, client], env=env, capture_output=True, text=True, timeout=60).stdout
            seen.append(json.loads([l for l in out.splitlines() if l.strip()][-1]))
    status, verdict = call("POST", f"/__llmchaos/sessions/{s['id']}/finish", seen)
    assert status == 200, (status, verdict)
    call("DELETE", f"/__llmchaos/sessions/{s['id']}")
    return verdict


status, body = call("POST", "/__llmchaos/sessions", {"case_path": case}, auth=False)
assert status == 401 and "error" in body, (status, body)
status, listed = call("GET", "/__llmchaos/sessions")
assert status == 200 and listed["sessions"] == [], listed
status, body = call("POST", "/__llmchaos/sessions", {"case_path": "/etc/passwd"})
assert status == 403 and "root:x" not in json.dumps(body), (status, body)

hardened, naive = judge(""), judge("retry")
print(f"hardened: {hardened['verdict']} (observed {hardened['observed']}); naive: {naive['verdict']} "
      f"(observed {naive['observed']}): {naive['summary']}")
assert hardened["verdict"] == "pass", hardened["summary"]
assert naive["verdict"] == "fail", naive["summary"]
status, written = call("POST", "/__llmchaos/sessions/reports", {"dir": "reports"})
assert status == 200 and written["cases"] == 2 and written["failed"] == 1, written
assert all(p.startswith("/tmp/reports/") for p in written["written"]), written
print("session API through the container: 401 without the token, 403 outside /cases, naive fails, hardened passes")
