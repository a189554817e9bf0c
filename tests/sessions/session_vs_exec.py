#!/usr/bin/env python3
"""The session API judges a client as `llmchaos run --driver exec` does: the same client program
(tests/harness/exec_client.py) runs once under the exec driver and once as a session's client (its
environment from the session's "environment", LLMCHAOS_REQUEST and LLMCHAOS_OPERATION_ID per request, its
last stdout line posted to finish), on the same cases; verdict, expected and observed action, every
failure point's action and every check's name and result must be equal.

usage: session_vs_exec.py LLMCHAOS_BIN SOURCE_DIR"""
import json, os, subprocess, sys, tempfile, time, urllib.request

bin_path, source = sys.argv[1], sys.argv[2]
client = os.path.join(source, "tests/harness/exec_client.py")
scale = "0.2"
# (case, EXEC_CLIENT_MODE): a fixed and a buggy client on a quota case, a retried 503, a sequence over a tier.
runs = [("cases/staging/quota-429-falls-back.toml", ""),
        ("cases/staging/quota-429-falls-back.toml", "retry"),
        ("cases/staging/overloaded-503-before-stream-retried.toml", "retry"),
        ("cases/staging/overloaded-503-before-stream-retried.toml", ""),
        ("cases/tiers/rpm-burst-over-limit-refused.toml", "")]


def facts(verdict, checks_key, ok_key, actions_key):
    return {"verdict": verdict["verdict"], "expected": verdict["expected"], "observed": verdict["observed"],
            "actions": verdict.get(actions_key, []),
            "checks": sorted((c["name"], c[ok_key]) for c in verdict[checks_key])}


def by_exec(case, mode, out):
    env = dict(os.environ, EXEC_CLIENT_MODE=mode)
    subprocess.run([bin_path, "run", os.path.join(source, case), "--driver", "exec", "--exec", f"python3 {client}",
                    "--time-scale", scale, "--report-dir", out], env=env, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    report = json.load(open(os.path.join(out, "report.json")))
    return facts(report["cases"][0], "checks", "ok", "observed_actions")


def post(url, body, method="POST"):
    req = urllib.request.Request(url, body.encode() if body is not None else None, method=method,
                                 headers={"content-type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        return json.loads(r.read())


def by_session(base, case, mode):
    s = post(f"{base}/__llmchaos/sessions", json.dumps({"case_path": os.path.join(source, case)}))
    seen = []
    with tempfile.TemporaryDirectory() as state:
        env = dict(os.environ, EXEC_CLIENT_MODE=mode, LLMCHAOS_STATE_DIR=state)
        env.update(var.split("=", 1) for var in s["environment"])
        start = time.monotonic()
        for i, op in enumerate(s["operation_ids"]):
            due = start + i * s["interval_ms"] / 1000
            time.sleep(max(0.0, due - time.monotonic()))
            request = dict(s["request"], operation_id=op)
            env.update(LLMCHAOS_REQUEST=json.dumps(request), LLMCHAOS_OPERATION_ID=op)
            out = subprocess.run(["python3", client], env=env, capture_output=True, text=True, timeout=60).stdout
            lines = [l for l in out.splitlines() if l.strip()]
            seen.append(json.loads(lines[-1]))
    verdict = post(f"{base}/__llmchaos/sessions/{s['id']}/finish", json.dumps(seen))
    post(f"{base}/__llmchaos/sessions/{s['id']}", None, method="DELETE")
    return facts(verdict, "checks", "passed", "actions")


def main():
    serve = subprocess.Popen([bin_path, "serve", "--port", "0", "--time-scale", scale, "--cases-root", source],
                             stdout=subprocess.PIPE, text=True)
    try:
        line = serve.stdout.readline()
        if not line.startswith("listening on "):
            print(f"serve did not start: {line!r}")
            return 1
        base = line.split("listening on ", 1)[1].strip()
        failures = 0
        with tempfile.TemporaryDirectory() as tmp:
            for n, (case, mode) in enumerate(runs):
                exec_facts = by_exec(case, mode, os.path.join(tmp, str(n)))
                session_facts = by_session(base, case, mode)
                same = exec_facts == session_facts
                failures += not same
                print(f"{'same' if same else 'DIFFERENT'}: {case} (client mode {mode or 'fixed'}): "
                      f"exec {exec_facts['verdict']} observed {exec_facts['observed']} {exec_facts['actions']}; "
                      f"session {session_facts['verdict']} observed {session_facts['observed']} {session_facts['actions']}")
                if not same:
                    print(f"  exec:    {exec_facts}\n  session: {session_facts}")
        print(f"{len(runs) - failures}/{len(runs)} runs judged the same")
        return 1 if failures else 0
    finally:
        serve.terminate()
        serve.wait(timeout=10)


if __name__ == "__main__":
    sys.exit(main())
