"""The official Python SDKs (openai, anthropic, google-genai): one client per route, default or hardened.
Default: the SDK as most teams first ship it (openai / anthropic: max_retries 2, 10 min timeout;
google-genai: no retries, no timeout), one route, no fallback. Hardened: the SDK's retries off, the
team's policy loop (policy.run_policy) over every route this SDK speaks."""
from __future__ import annotations

from .chat import chat
from .contract import Env, Route
from .policy import run_plain, run_policy


def make_client(dialect: str, route: Route, env: Env, hardened_timeout_s: float | None = None):
    """The SDK's client for `route`; `hardened_timeout_s`: retries off and this timeout (None: defaults)."""
    opts = {} if hardened_timeout_s is None else {"max_retries": 0, "timeout": hardened_timeout_s}
    if dialect == "openai":
        import openai

        return openai.OpenAI(api_key="sk-llmchaos-example", base_url=route.base_url, default_headers=env.headers, **opts)
    if dialect == "anthropic":
        import anthropic

        return anthropic.Anthropic(api_key="sk-ant-llmchaos-example", base_url=route.base_url,
                                   default_headers=env.headers, **opts)
    if dialect == "gemini":
        from google import genai
        from google.genai import types

        # genai's timeout is in milliseconds; it retries nothing unless retry_options is set.
        timeout = {} if hardened_timeout_s is None else {"timeout": int(hardened_timeout_s * 1000)}
        return genai.Client(api_key="gemini-llmchaos-example",
                            http_options=types.HttpOptions(base_url=route.base_url, headers=env.headers, **timeout))
    raise ValueError(f"no official SDK client for {dialect}")


def run_default(dialect: str) -> None:
    def call(env: Env) -> dict:
        if env.primary.dialect != dialect:
            raise ValueError(f"primary route {env.primary.name} speaks {env.primary.dialect}, not {dialect}")
        answer = chat(dialect, make_client(dialect, env.primary, env), env.request)
        return {**answer, "route": env.primary.name}

    run_plain(call)


def run_hardened(dialect: str) -> None:
    from .contract import read_env

    env = read_env()
    clients: dict[str, object] = {}

    def attempt(route: Route, hooks) -> dict:
        if route.name not in clients:
            clients[route.name] = make_client(dialect, route, env, hardened_timeout_s=hooks.timeout_s)
        return chat(dialect, clients[route.name], env.request, hooks.on_open, hooks.on_text)

    run_policy(env.routes([dialect]), attempt, env)
