"""The probe behind the claim that the LiteLLM Router uses one cooldown for rate and quota 429s and waits
out its retry backoff before falling back (examples/README.md, "Claims (Python)"). Not an exec-driver
client: a cooldown lives in one Router, so one process makes three calls through one Router, against
`llmchaos serve` (a mock on 127.0.0.1 whose ledger is the evidence).

For FAULT in rate_429 (retry-after 1 s, the fault's default) and quota_429 (an OpenAI quota body, no
retry-after), each with its own mock and its own Router with its defaults, in two shapes: `groups` (one
deployment per model group, `fallbacks` from `primary` to `backup`, as litellm-router-default) and
`pool` (one model group of both deployments, load balanced: where a cooldown takes one out):
  call 1: the primary route answers FAULT to its first 4 attempts, backup is healthy;
  call 2: at once after call 1: is primary tried again, or skipped (cooled down)?
  (after each call: the deployments in the Router's cooldown store)
  call 3: after the Router's cooldown (its `cooldown_time`) and 1 s more: primary (now healthy) again?
Printed per call: what the caller got, how long the call took, and every attempt the mock saw
(route[attempt] fault status, ms from the call's first attempt).
    LLMCHAOS_BIN=build/app/llmchaos examples/python/.venv/bin/python examples/python/probes/litellm-router-cooldown.py
"""
import importlib.metadata as md
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import warnings

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("LITELLM_TELEMETRY", "False")
import litellm  # noqa: E402

litellm.telemetry = False
litellm.suppress_debug_info = True

BIN = os.environ.get("LLMCHAOS_BIN") or sys.exit("litellm-router-cooldown: set LLMCHAOS_BIN")


def serve(fault: str):
    steps = ", ".join(f'{{ fault = "{fault}" }}' for _ in range(4))
    script = tempfile.NamedTemporaryFile("w", suffix=".toml", delete=False)
    script.write(f'[route.primary]\ndialect = "openai"\nscript = [{steps}]\n\n[route.backup]\ndialect = "openai"\n')
    script.close()
    proc = subprocess.Popen([BIN, "serve", "--script", script.name, "--port", "0"], stdout=subprocess.PIPE, text=True)
    first = proc.stdout.readline().strip()
    if not first.startswith("listening on "):
        proc.kill()
        sys.exit(f"litellm-router-cooldown: llmchaos serve said {first!r}")
    return proc, first.removeprefix("listening on ")


def ledger(base: str) -> list:
    with urllib.request.urlopen(f"{base}/__llmchaos/ledger", timeout=5) as r:
        body = json.loads(r.read())
    return body["entries"] if isinstance(body, dict) else body


def cooled(router) -> str:
    """The deployments the Router holds in cooldown now (its own store), by api_base's route."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model_list = router.model_list
        ids = {d["model_info"]["id"]: d["litellm_params"]["api_base"].rsplit("/", 2)[-2] for d in model_list}
        active = router.health().cooldowns.get_active_cooldowns(list(ids), None)
        return ", ".join(f"{ids.get(i, i)} ({v.get('cooldown_time', '?')} s)" for i, v in active) or "none"
    except Exception as e:  # noqa: BLE001 - the store's API is internal; the ledger is the evidence
        return f"unreadable ({type(e).__name__})"


def probe(fault: str, shape: str) -> None:
    """shape `groups`: one deployment per model group, `fallbacks` primary -> backup (the suite's
    litellm-router-default); `pool`: one group of both deployments (load balanced), no fallbacks."""
    proc, base = serve(fault)
    try:
        def deployment(group: str, route: str) -> dict:
            return {"model_name": group, "litellm_params": {"model": "openai/gpt-4o-mini", "api_base": f"{base}/{route}/v1",
                                                            "api_key": "sk-llmchaos-example"}}

        if shape == "groups":
            router = litellm.Router(model_list=[deployment("primary", "primary"), deployment("backup", "backup")],
                                    fallbacks=[{"primary": ["backup"]}])
        else:
            router = litellm.Router(model_list=[deployment("primary", "primary"), deployment("primary", "backup")])
        st = router.settings()

        def setting(name: str):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return getattr(st, name, getattr(router, name, "?"))

        print(f"## {fault}, {shape} (litellm {md.version('litellm')}): num_retries {setting('num_retries')}, "
              f"cooldown_time {setting('cooldown_time')}, allowed_fails {setting('allowed_fails')}, "
              f"retry_after {setting('retry_after')}")
        seen = 0
        for call in (1, 2, 3):
            if call == 3:
                time.sleep(float(setting('cooldown_time') or 5) + 1)
            t0 = time.monotonic()
            try:
                router.completion(model="primary", messages=[{"role": "user", "content": f"call {call}"}], max_tokens=16)
                result = "answered"
            except Exception as e:  # noqa: BLE001 - the probe prints what the caller saw
                result = f"raised {type(e).__name__}: {str(e)[:160]}"
            took = (time.monotonic() - t0) * 1000
            entries = ledger(base)
            new, seen = entries[seen:], len(entries)
            first = new[0]["received_at_ms"] if new else 0
            print(f"call {call}: {result}, {took:.0f} ms; in cooldown after it: {cooled(router)}")
            for e in new:
                print(f"    {e['route']}[{e['attempt']}] {e['fault']} {e['status'] or 'none'} at +{e['received_at_ms'] - first:.0f} ms")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


for shape in ("groups", "pool"):
    for f in sys.argv[1:] or ["rate_429", "quota_429"]:
        probe(f, shape)
