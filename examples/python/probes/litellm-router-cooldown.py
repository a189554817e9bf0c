"""The probe behind the claim that the LiteLLM Router uses one cooldown for rate and quota 429s and waits
out its retry backoff before falling back (examples/README.md, "Claims (Python)"). Not an exec-driver
client: a cooldown lives in one Router, so one process makes three calls through one Router, against
`llmchaos serve` (a mock on 127.0.0.1 whose ledger is the evidence).

For FAULT in rate_429 (retry-after 1 s, the fault's default) and quota_429 (OpenAI insufficient_quota,
no retry-after), each with its own mock and its own Router (the Router's defaults, `fallbacks` from
`primary` to `backup`, both openai deployments):
  call 1: primary answers FAULT to every attempt the script has (4), backup is healthy;
  call 2: at once after call 1: is primary tried again, or skipped (cooled down)?
  call 3: after the Router's cooldown (its `cooldown_time`) and 1 s more: primary (now healthy) again?
Printed per call: what the caller got, how long the call took, and every attempt the mock saw
(route[attempt] fault status, ms from the call's first attempt).
    LLMCHAOS_BIN=build/app/llmchaos examples/python/.venv/bin/python examples/python/probes/litellm-router-cooldown.py
"""
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request

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


def probe(fault: str) -> None:
    proc, base = serve(fault)
    try:
        def deployment(name: str, key: str) -> dict:
            return {"model_name": name, "litellm_params": {"model": "openai/gpt-4o-mini", "api_base": f"{base}/{name}/v1",
                                                           "api_key": "sk-llmchaos-example",
                                                           "extra_headers": {"Idempotency-Key": key}}}

        print(f"## {fault} (litellm {litellm.__version__ if hasattr(litellm, '__version__') else ''})".rstrip())
        router = litellm.Router(model_list=[deployment("primary", "p"), deployment("backup", "b")],
                                fallbacks=[{"primary": ["backup"]}])
        cooldown = getattr(router, "cooldown_time", None)
        print(f"router: num_retries {getattr(router, 'num_retries', '?')}, cooldown_time {cooldown}, "
              f"allowed_fails {getattr(router, 'allowed_fails', '?')}, retry_after {getattr(router, 'retry_after', '?')}")
        seen = 0
        for call in (1, 2, 3):
            if call == 3:
                time.sleep(float(cooldown or 5) + 1)
            t0 = time.monotonic()
            try:
                r = router.completion(model="primary", messages=[{"role": "user", "content": f"call {call}"}],
                                      max_tokens=16)
                result = f"answered by {r._hidden_params.get('model_group') or r.model}"
            except Exception as e:  # noqa: BLE001 - the probe prints what the caller saw
                result = f"raised {type(e).__name__}: {str(e)[:160]}"
            took = (time.monotonic() - t0) * 1000
            entries = ledger(base)
            new, seen = entries[seen:], len(entries)
            first = new[0]["received_at_ms"] if new else 0
            print(f"call {call}: {result}, {took:.0f} ms")
            for e in new:
                print(f"    {e['route']}[{e['attempt']}] {e['fault']} {e['status'] or 'none'} at +{e['received_at_ms'] - first:.0f} ms")
    finally:
        proc.terminate()
        proc.wait(timeout=10)


for f in sys.argv[1:] or ["rate_429", "quota_429"]:
    probe(f)
