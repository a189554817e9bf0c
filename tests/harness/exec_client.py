#!/usr/bin/env python3
"""A tiny exec-driver client: tries the primary once, then each fallback once (no retries), and prints
the contract's last line. EXEC_CLIENT_MODE: retry (each route tried twice), hang (waits on a child process), crash (SIGSEGV), noline
(no contract line: the exit code says). The case's tier (LLMCHAOS_TIER_RPM / _RPD) is kept across the
case's processes in LLMCHAOS_STATE_DIR: a request over it is refused ("rate_limited") unsent."""
import json, os, re, signal, subprocess, sys, time, urllib.request

mode = os.environ.get("EXEC_CLIENT_MODE", "")
if mode == "hang":
    print("hanging", flush=True)
    subprocess.run(["sleep", "613"])  # a distinctive argument: the test looks for strays
if mode == "crash":
    print("about to crash", flush=True)
    os.kill(os.getpid(), signal.SIGSEGV)

req = json.loads(os.environ["LLMCHAOS_REQUEST"])


def tier_refusal():
    """The limit that refuses this request, or None (then it is counted): sliding windows of scripted time."""
    limits = [(os.environ.get("LLMCHAOS_TIER_RPM"), 60_000, "requests_per_minute"),
              (os.environ.get("LLMCHAOS_TIER_RPD"), 86_400_000, "requests_per_day")]
    if not any(limit for limit, _, _ in limits):
        return None
    scale = float(os.environ.get("LLMCHAOS_TIME_SCALE", "1"))
    path = os.path.join(os.environ["LLMCHAOS_STATE_DIR"], "tier.json")
    times = json.load(open(path)) if os.path.exists(path) else []
    now = time.time() * 1000
    for limit, window, name in limits:
        if limit and sum(1 for t in times if t + window * scale > now) >= int(limit):
            return name
    with open(path, "w") as f:
        json.dump(times + [now], f)
    return None


refused = tier_refusal()
if refused:
    print(json.dumps({"outcome": "rate_limited", "limited_by": refused}))
    sys.exit(0)
routes = [os.environ["LLMCHAOS_PRIMARY"]] + [r for r in os.environ.get("LLMCHAOS_FALLBACK", "").split(",") if r]


def call(route):
    key = re.sub(r"[^A-Z0-9]", "_", route.upper())
    base, dialect = os.environ[f"LLMCHAOS_{key}_BASE_URL"], os.environ[f"LLMCHAOS_{key}_DIALECT"]
    msgs = [{"role": "user", "content": req["prompt"]}]
    if dialect == "openai":
        url, body = f"{base}/chat/completions", {"model": req["model"], "messages": msgs}
    elif dialect == "anthropic":
        url, body = f"{base}/v1/messages", {"model": req["model"], "max_tokens": 256, "messages": msgs}
    else:
        url = f"{base}/v1beta/models/{req['model']}:generateContent"
        body = {"contents": [{"role": "user", "parts": [{"text": req["prompt"]}]}]}
    r = urllib.request.Request(url, json.dumps(body).encode(), {"content-type": "application/json",
                                                                "authorization": "Bearer k", "x-api-key": "k",
                                                                "idempotency-key": req["operation_id"]})
    with urllib.request.urlopen(r, timeout=5) as res:
        j = json.loads(res.read())
    if dialect == "openai":
        return {"text": j["choices"][0]["message"]["content"], "model": j["model"],
                "output_tokens": j.get("usage", {}).get("completion_tokens", 0)}
    if dialect == "anthropic":
        return {"text": "".join(c.get("text", "") for c in j["content"]), "model": j["model"],
                "output_tokens": j.get("usage", {}).get("output_tokens", 0)}
    return {"text": "".join(p.get("text", "") for p in j["candidates"][0]["content"]["parts"]),
            "model": j.get("modelVersion", ""), "output_tokens": j.get("usageMetadata", {}).get("candidatesTokenCount", 0)}


tries = 2 if mode == "retry" else 1  # retry: every failure retried once on its route (a quota 429 too: the bug)
for i, route in enumerate(routes):
    for _ in range(tries):
        try:
            answer = call(route)
        except Exception as e:  # noqa: BLE001 - any failure moves on (retry, then the next route)
            print(f"{route}: {e}", file=sys.stderr)
            continue
        if mode != "noline":
            print(json.dumps({"outcome": "primary_success" if i == 0 else "fallback_recovery", "route": route, **answer}))
        sys.exit(0)
if mode != "noline":
    print(json.dumps({"outcome": "fail_closed", "text": ""}))
sys.exit(3)
