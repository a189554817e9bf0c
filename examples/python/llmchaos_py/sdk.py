"""The official Python SDKs (openai, anthropic, google-genai, boto3's bedrock-runtime): one client per route,
default or hardened. Default: the SDK as most teams first ship it (openai / anthropic: max_retries 2, 10 min
timeout; google-genai: no retries, no timeout; boto3: standard retry mode, 3 attempts, 60 s read timeout),
one route, no fallback. Hardened: the SDK's retries off, the
team's policy loop (policy.run_policy) over every route this SDK speaks."""
from __future__ import annotations

from .chat import chat
from . import wire
from .contract import Env, Route, TruncatedStream, read_env
from .policy import run_plain, run_policy


def make_client(dialect: str, route: Route, env: Env, **options):
    """The SDK's client for `route`; `options` go to its constructor (google-genai: to HttpOptions)."""
    if dialect == "openai":
        import openai

        return openai.OpenAI(api_key="sk-llmchaos-example", base_url=route.base_url, default_headers=env.headers,
                             **options)
    if dialect == "anthropic":
        import anthropic

        return anthropic.Anthropic(api_key="sk-ant-llmchaos-example", base_url=route.base_url,
                                   default_headers=env.headers, **options)
    if dialect == "gemini":
        from google import genai
        from google.genai import types

        return genai.Client(api_key="gemini-llmchaos-example",
                            http_options=types.HttpOptions(base_url=route.base_url, headers=env.headers, **options))
    if dialect == "bedrock":
        return bedrock_client(route, env, **options)
    raise ValueError(f"no official SDK client for {dialect}")


def bedrock_client(route: Route, env: Env, **options):
    """boto3's bedrock-runtime client on the route (the endpoint keeps the route's path prefix), dummy
    credentials (SigV4 is computed, the mock checks its shape), `options` for botocore's Config. The
    request's Idempotency-Key is added before signing: botocore has no default headers."""
    import boto3
    from botocore.config import Config

    client = boto3.client("bedrock-runtime", endpoint_url=route.base_url, region_name="us-east-1",
                          aws_access_key_id="AKIDLLMCHAOSEXAMPLE", aws_secret_access_key="llmchaos-example-secret",
                          config=Config(**options))

    def add_headers(request, **_):
        for k, v in env.headers.items():
            request.headers[k] = v

    client.meta.events.register("before-sign.bedrock-runtime.*", add_headers)
    return client


def hardened_options(dialect: str, timeout_s: float) -> dict:
    """Retries off (google-genai retries nothing unless retry_options is set) and the attempt timeout
    (google-genai's is in milliseconds; botocore's read timeout bounds the headers and each read)."""
    if dialect == "bedrock":
        return {"retries": {"total_max_attempts": 1}, "connect_timeout": timeout_s, "read_timeout": timeout_s}
    if dialect == "gemini":
        return {"timeout": int(timeout_s * 1000)}
    return {"max_retries": 0, "timeout": timeout_s}


def run_default(dialect: str, **client_options) -> None:
    def call(env: Env) -> dict:
        if env.primary.dialect != dialect:
            raise ValueError(f"primary route {env.primary.name} speaks {env.primary.dialect}, not {dialect}")
        answer = chat(dialect, make_client(dialect, env.primary, env, **client_options), env.request)
        return {**answer, "route": env.primary.name}

    run_plain(call)


def run_hardened(dialect: str) -> None:
    env = read_env()
    clients: dict[str, object] = {}

    def attempt(route: Route, hooks) -> dict:
        if route.name not in clients:
            clients[route.name] = make_client(dialect, route, env, **hardened_options(dialect, hooks.timeout_s))
            if dialect == "bedrock":
                wire.watch_botocore(clients[route.name])
        answer = chat(dialect, clients[route.name], env.request, hooks.on_open, hooks.on_text)
        # Every plain Converse answer has a stopReason: one without it is a body botocore could not parse.
        if dialect == "bedrock" and not env.request.get("stream") and not answer["finish_reason"]:
            raise TruncatedStream(hooks.attempt.visible)
        return answer

    run_policy(env.routes([dialect]), attempt, env)
