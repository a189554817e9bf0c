"""Starts the LiteLLM proxy server for one llmchaos case, on 127.0.0.1:PORT, with a config.yaml written
from the case's rendered template (litellm-proxy.template: the key and the case's policy as TOML).

    serve.py start TEMPLATE PORT [SOCKET]   one case's proxy (examples/targets/litellm-proxy/start)
    serve.py warm SOCKET                    a warm parent for a run (examples/run-target-suites)

The mapping, the way a team would first write a LiteLLM config for the case's policy:
- model_list: the primary route under the model name the harness's request asks for (`mock-model`),
  each fallback route under its own name; `model` is LiteLLM's provider prefix for the route's dialect
  (openai/, anthropic/, gemini/), `api_base` the route's URL inside the case's mock namespace (openai:
  .../v1, LiteLLM appends /chat/completions; anthropic: the bare base, it appends /v1/messages; gemini:
  .../v1beta, it appends /models/MODEL:generateContent), `api_key` the harness's key, `timeout` and
  `stream_timeout` the policy's attempt timeout.
- router_settings: `num_retries` = max_total_attempts - 1 (what a retry setting takes), `fallbacks`
  = [{mock-model: [the workflow's fallbacks in order]}], `timeout` the attempt timeout, `retry_after`
  (the Router's least wait before a retry) the policy's backoff base, `allowed_fails` and
  `cooldown_time` from the primary route's breaker (failure_threshold, open_ms).
- general_settings: `master_key` = the harness's key (the proxy refuses to start without one).
- litellm_settings: `callbacks` = llmchaos_idempotency (a pre-call hook: LiteLLM forwards only x-*
  client headers upstream, even with forward_client_headers_to_llm_api; the hook passes the
  Idempotency-Key on, as Portkey's forward_headers does).
LITELLM_LOCAL_MODEL_COST_MAP=True: no fetch of the model cost map from GitHub at import.

Importing litellm.proxy takes ~7.5 s of CPU; three at once on the shared 2-core machine took longer
than the harness waits for a target to listen (30 s at most). So a run starts one warm parent that has
imported it (`warm`), and each case's `start` asks it over a Unix socket for a forked child that loads
the case's config and runs the proxy (`litellm --config ... --port ...`'s own code, proxy_cli.run_server)
with the case's stdout and stderr (passed over the socket): start-up in about a second. The child
exits when `start` does (the harness kills the case's process group at its end: the socket closes).
Without a SOCKET (or when it does not answer) `start` runs the proxy in its own process, cold.
"""
import json
import os
import pathlib
import socket
import sys
import threading
import tomllib

HERE = pathlib.Path(__file__).resolve().parent
PROVIDER = {"openai": "openai", "anthropic": "anthropic", "gemini": "gemini"}
MODEL = "mock-model"  # what the http driver's request names (the workflow request's default model)


def api_base(route):
    base = route["base_url"].rstrip("/")
    return {"openai": base + "/v1", "anthropic": base, "gemini": base + "/v1beta"}[route["dialect"]]


def litellm_config(case):
    """The proxy's config (a dict, written as JSON: YAML is a superset) for the rendered template."""
    w, routes = case["workflow"], case.get("route", {})
    timeout_s = w["attempt_timeout_ms"] / 1000

    def deployment(model_name, route_name):
        r = routes[route_name]
        if r.get("dialect") not in PROVIDER:
            raise SystemExit(f"serve.py: route {route_name}: dialect {r.get('dialect')!r} has no LiteLLM provider here")
        return {"model_name": model_name,
                "litellm_params": {"model": f"{PROVIDER[r['dialect']]}/{MODEL}", "api_base": api_base(r),
                                   "api_key": case["key"], "timeout": timeout_s, "stream_timeout": timeout_s}}

    fallbacks = [f for f in w.get("fallback", []) if f in routes and "base_url" in routes[f]]
    breaker = routes[w["primary"]].get("breaker", {})
    router = {"num_retries": max(0, w["max_total_attempts"] - 1), "timeout": timeout_s,
              "retry_after": case.get("backoff", {}).get("base_ms", 0) / 1000}
    if fallbacks:
        router["fallbacks"] = [{MODEL: fallbacks}]
    if breaker.get("failure_threshold"):
        router["allowed_fails"] = breaker["failure_threshold"]
    if breaker.get("open_ms"):
        router["cooldown_time"] = breaker["open_ms"] / 1000
    return {"model_list": [deployment(MODEL, w["primary"])] + [deployment(f, f) for f in fallbacks],
            "router_settings": router,
            "litellm_settings": {"callbacks": ["llmchaos_idempotency.proxy_handler_instance"]},
            "general_settings": {"master_key": case["key"]}}


def write_config(template):
    case = tomllib.loads(pathlib.Path(template).read_text())
    out = pathlib.Path(template).with_name("litellm-config.yaml")
    out.write_text(json.dumps(litellm_config(case), indent=2) + "\n")
    return out


def set_env():
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
    os.environ.setdefault("LITELLM_LOG", "WARNING")
    sys.path.insert(0, str(HERE))  # llmchaos_idempotency


def preload():
    set_env()
    import litellm.proxy.proxy_cli  # noqa: F401
    import litellm.proxy.proxy_server  # noqa: F401
    import uvicorn  # noqa: F401


def run_proxy(template, port):
    """Runs the proxy in this process (never returns but by exiting): `litellm --config ... --port ...`."""
    config = write_config(template)
    print(f"serve.py: {config}: {config.read_text()}", flush=True)
    from litellm.proxy.proxy_cli import run_server
    try:
        run_server.main(args=["--config", str(config), "--host", "127.0.0.1", "--port", str(port),
                              "--num_workers", "1"], standalone_mode=False)
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else 1
    except BaseException as e:  # noqa: BLE001 (anything the proxy raised: reported, exit 1)
        print(f"serve.py: the proxy failed: {e!r}", file=sys.stderr, flush=True)
        code = 1
    sys.stdout.flush()
    sys.stderr.flush()
    return code


def warm(sock_path):
    """Imports the proxy once, then forks a child per request on SOCKET (see the top comment)."""
    import signal
    preload()
    try:  # die with the run that started us (PR_SET_PDEATHSIG = 1)
        import ctypes
        ctypes.CDLL(None).prctl(1, signal.SIGTERM)
    except OSError:
        pass
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # children reaped by the kernel
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    if os.path.exists(sock_path):
        os.unlink(sock_path)
    srv.bind(sock_path)
    srv.listen(16)
    print(f"serve.py: warm on {sock_path} (pid {os.getpid()})", flush=True)
    while True:
        conn, _ = srv.accept()
        try:
            msg, fds, _, _ = socket.recv_fds(conn, 65536, 2)
            req = json.loads(msg)
        except (OSError, ValueError):
            conn.close()
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        if os.fork() == 0:
            srv.close()
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.dup2(fds[0], 1)
            os.dup2(fds[1], 2)
            for fd in fds:
                os.close(fd)
            os.chdir(req["cwd"])

            def watch():  # start closed its end (it was killed with the case): end the proxy
                try:
                    conn.recv(1)
                finally:
                    os._exit(0)
            threading.Thread(target=watch, daemon=True).start()
            code = run_proxy(req["template"], req["port"])
            try:
                conn.sendall(bytes([code & 0xFF]))
            finally:
                os._exit(code)
        conn.close()
        for fd in fds:
            os.close(fd)


def start(template, port, sock_path=None):
    if sock_path and os.path.exists(sock_path):
        conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            conn.connect(sock_path)
        except OSError as e:
            print(f"serve.py: the warm parent at {sock_path} does not answer ({e}): starting cold", flush=True)
        else:
            req = {"template": str(pathlib.Path(template).resolve()), "port": int(port), "cwd": os.getcwd()}
            socket.send_fds(conn, [json.dumps(req).encode()], [1, 2])
            status = conn.recv(1)  # blocks while the proxy runs; our death closes the socket
            return status[0] if status else 1
    set_env()
    return run_proxy(template, port)


if __name__ == "__main__":
    args = sys.argv[1:]
    if len(args) == 2 and args[0] == "warm":
        warm(args[1])
    elif len(args) in (3, 4) and args[0] == "start":
        sys.exit(start(*args[1:]))
    else:
        sys.exit("usage: serve.py start TEMPLATE PORT [SOCKET] | serve.py warm SOCKET")
