"""The Python frameworks (LangChain, pydantic-ai, the LiteLLM Router): one model per route, one call per
request. Default: the framework as its docs show it (its own retries and fallback), an error goes to the
caller (policy.run_plain). Hardened: its retries and fallback off, the team's policy loop
(policy.run_policy) over every route it speaks, in either dialect (a fallback may change provider)."""
from __future__ import annotations

import asyncio
import os

from .contract import FILTERED, PREFILL, Env, Route, read_env
from .policy import run_plain, run_policy

DIALECTS = ["openai", "anthropic"]
KEYS = {"openai": "sk-llmchaos-example", "anthropic": "sk-ant-llmchaos-example"}


def _answer(text: str, model: str, tokens: int, finish: str | None) -> dict:
    finish = finish or ""
    return {"text": text, "model": model, "output_tokens": tokens or 0, "finish_reason": finish,
            "filtered": bool(FILTERED.match(finish))}


# ---- LangChain (langchain-openai, langchain-anthropic) ----

def langchain_model(route: Route, env: Env, max_retries: int | None = None):
    """`max_retries` None: LangChain's default (2, passed to the SDK client, which backs off and honours
    Retry-After as the SDK does)."""
    retries = {} if max_retries is None else {"max_retries": max_retries}
    model = env.request["model"]
    if route.dialect == "openai":
        from langchain_openai import ChatOpenAI

        return ChatOpenAI(model=model, api_key=KEYS["openai"], base_url=route.base_url,
                          default_headers=env.headers, stream_usage=True, **retries)
    if route.dialect == "anthropic":
        from langchain_anthropic import ChatAnthropic

        return ChatAnthropic(model=model, api_key=KEYS["anthropic"], base_url=route.base_url,
                             default_headers=env.headers, max_tokens=256, **retries)
    raise ValueError(f"the LangChain example has no chat model for {route.dialect}")


def _text_of(content) -> str:
    if isinstance(content, str):
        return content
    return "".join(b if isinstance(b, str) else b.get("text", "") if b.get("type") in ("text", "text_delta") else ""
                   for b in content or [])


def langchain_chat(runnable, request: dict, on_open=lambda: None, on_text=lambda t: None) -> dict:
    prompt = [("human", request["prompt"]), ("ai", PREFILL)] if request.get("prefill") else request["prompt"]
    if not request.get("stream"):
        m = runnable.invoke(prompt)
        text = _text_of(m.content)
        on_text(text)
        meta = m.response_metadata or {}
        tokens = (m.usage_metadata or {}).get("output_tokens", 0)
        return _answer(text, meta.get("model_name") or meta.get("model") or request["model"], tokens,
                       meta.get("finish_reason") or meta.get("stop_reason"))
    text, model, tokens, finish, opened = "", request["model"], 0, "", False
    for chunk in runnable.stream(prompt):
        if not opened:
            opened = True
            on_open()
        delta = _text_of(chunk.content)
        if delta:
            text += delta
            on_text(delta)
        meta = {**(chunk.additional_kwargs or {}), **(chunk.response_metadata or {})}
        finish = meta.get("finish_reason") or meta.get("stop_reason") or finish
        model = meta.get("model_name") or meta.get("model") or model
        tokens = (chunk.usage_metadata or {}).get("output_tokens") or tokens
    return _answer(text, model, tokens, finish)


def langchain_default(env: Env) -> dict:
    """As LangChain's docs show it: the default retries and `.with_fallbacks` to the case's fallbacks."""
    routes = env.routes(DIALECTS)
    if not routes or routes[0] is not env.primary:
        raise ValueError(f"the primary route speaks {env.primary.dialect}, which this example has no model for")
    primary, *rest = [langchain_model(r, env) for r in routes]
    runnable = primary.with_fallbacks(rest) if rest else primary
    return langchain_chat(runnable, env.request)


def langchain_attempt(env: Env):
    models: dict[str, object] = {}

    def attempt(route: Route, hooks) -> dict:
        if route.name not in models:
            models[route.name] = langchain_model(route, env, max_retries=0)
        return langchain_chat(models[route.name], env.request, hooks.on_open, hooks.on_text)

    return attempt


# ---- pydantic-ai ----

def pydantic_model(route: Route, env: Env, max_retries: int | None = None):
    """An OpenAIChatModel / AnthropicModel over the official SDK's async client (SDK defaults when
    `max_retries` is None: 2 retries)."""
    retries = {} if max_retries is None else {"max_retries": max_retries}
    if route.dialect == "openai":
        from openai import AsyncOpenAI
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        client = AsyncOpenAI(api_key=KEYS["openai"], base_url=route.base_url, default_headers=env.headers, **retries)
        return OpenAIChatModel(env.request["model"], provider=OpenAIProvider(openai_client=client))
    if route.dialect == "anthropic":
        from anthropic import AsyncAnthropic
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        client = AsyncAnthropic(api_key=KEYS["anthropic"], base_url=route.base_url, default_headers=env.headers, **retries)
        return AnthropicModel(env.request["model"], provider=AnthropicProvider(anthropic_client=client))
    raise ValueError(f"the pydantic-ai example has no model for {route.dialect}")


def pydantic_chat(model, request: dict, on_open=lambda: None, on_text=lambda t: None) -> dict:
    """One agent run (pydantic-ai sends no assistant prefill: a prefill request is sent as its prompt)."""
    from pydantic_ai import Agent

    agent = Agent(model, model_settings={"max_tokens": 256})

    async def run() -> dict:
        if not request.get("stream"):
            r = await agent.run(request["prompt"])
            text = str(r.output)
            on_text(text)
            resp = r.response
            return _answer(text, resp.model_name or request["model"], resp.usage.output_tokens, resp.finish_reason)
        text = ""
        async with agent.run_stream(request["prompt"]) as r:
            on_open()
            # debounce_by=None: every delta as it arrives. The default (0.1 s) groups them, and a stream
            # that breaks inside that window loses its last group: the caller never saw text that was
            # visible, and the policy loop took a committed stream for an uncommitted one.
            async for delta in r.stream_text(delta=True, debounce_by=None):
                if delta:
                    text += delta
                    on_text(delta)
            resp = r.response
        return _answer(text, resp.model_name or request["model"], resp.usage.output_tokens, resp.finish_reason)

    return asyncio.run(run())


def pydantic_default(env: Env) -> dict:
    """FallbackModel over the case's routes (primary first), each model with its SDK's defaults."""
    from pydantic_ai.models.fallback import FallbackModel

    routes = env.routes(DIALECTS)
    if not routes or routes[0] is not env.primary:
        raise ValueError(f"the primary route speaks {env.primary.dialect}, which this example has no model for")
    models = [pydantic_model(r, env) for r in routes]
    return pydantic_chat(FallbackModel(*models) if len(models) > 1 else models[0], env.request)


def pydantic_attempt(env: Env):
    def attempt(route: Route, hooks) -> dict:
        return pydantic_chat(pydantic_model(route, env, max_retries=0), env.request, hooks.on_open, hooks.on_text)

    return attempt


# ---- the LiteLLM Router, in process ----

def _litellm():
    # The model cost map is fetched from GitHub at import unless told otherwise (loopback only here).
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    os.environ.setdefault("LITELLM_TELEMETRY", "False")
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    return litellm


def litellm_deployment(route: Route, env: Env) -> dict:
    if route.dialect not in DIALECTS:
        raise ValueError(f"the LiteLLM example has no deployment for {route.dialect}")
    return {"model_name": route.name,
            "litellm_params": {"model": f"{route.dialect}/{env.request['model']}", "api_base": route.base_url,
                               "api_key": KEYS[route.dialect], "extra_headers": dict(env.headers)}}


def litellm_chat(router, group: str, request: dict, on_open=lambda: None, on_text=lambda t: None) -> dict:
    messages = [{"role": "user", "content": request["prompt"]}]
    if request.get("prefill"):
        messages.append({"role": "assistant", "content": PREFILL})
    if not request.get("stream"):
        r = router.completion(model=group, messages=messages, max_tokens=256)
        choice = r.choices[0]
        text = choice.message.content or ""
        on_text(text)
        usage = getattr(r, "usage", None)
        return _answer(text, r.model or request["model"], usage.completion_tokens if usage else 0, choice.finish_reason)
    text, model, tokens, finish, opened = "", request["model"], 0, "", False
    # include_usage: without it LiteLLM's stream chunks carry no usage (the provider's is dropped), and
    # the answer would name no output tokens (names_serving_route).
    for chunk in router.completion(model=group, messages=messages, max_tokens=256, stream=True,
                                   stream_options={"include_usage": True}):
        if not opened:
            opened = True
            on_open()
        for choice in chunk.choices or []:
            delta = choice.delta.content if choice.delta else None
            if delta:
                text += delta
                on_text(delta)
            finish = choice.finish_reason or finish
        model = chunk.model or model
        usage = getattr(chunk, "usage", None)
        tokens = (usage.completion_tokens if usage else 0) or tokens
    return _answer(text, model, tokens, finish)


def litellm_default(env: Env) -> dict:
    """A Router over the case's routes, one deployment each, `fallbacks` from the primary to the case's
    fallbacks, the Router's defaults otherwise (num_retries, cooldowns)."""
    litellm = _litellm()
    routes = env.routes(DIALECTS)
    if not routes or routes[0] is not env.primary:
        raise ValueError(f"the primary route speaks {env.primary.dialect}, which this example has no deployment for")
    fallbacks = [{env.primary.name: [r.name for r in routes[1:]]}] if len(routes) > 1 else []
    router = litellm.Router(model_list=[litellm_deployment(r, env) for r in routes], fallbacks=fallbacks)
    return litellm_chat(router, env.primary.name, env.request)


def litellm_attempt(env: Env):
    litellm = _litellm()
    routers: dict[str, object] = {}

    def attempt(route: Route, hooks) -> dict:
        if route.name not in routers:
            routers[route.name] = litellm.Router(model_list=[litellm_deployment(route, env)], num_retries=0,
                                                 disable_cooldowns=True, timeout=hooks.timeout_s)
        return litellm_chat(routers[route.name], route.name, env.request, hooks.on_open, hooks.on_text)

    return attempt


DEFAULT = {"langchain": langchain_default, "pydantic-ai": pydantic_default, "litellm-router": litellm_default}
ATTEMPT = {"langchain": langchain_attempt, "pydantic-ai": pydantic_attempt, "litellm-router": litellm_attempt}


def run_default(framework: str) -> None:
    run_plain(DEFAULT[framework])


def run_hardened(framework: str) -> None:
    env = read_env()
    run_policy(env.routes(DIALECTS), ATTEMPT[framework](env), env)
