"""One chat call per dialect through an official SDK client (openai, anthropic, google-genai, boto3), as
examples/sdk/lib/common.mjs's chat(). `on_open` sees a stream's headers, `on_text` each visible delta.
openai / anthropic: a stream without its finish reason (finish_reason, stop_reason) is a TruncatedStream; a
gemini or bedrock stream is as whole as its body (SPEC's no_terminator). Returns {text, model, output_tokens[, finish_reason, filtered]}."""
from __future__ import annotations

from .contract import FILTERED, PREFILL, TruncatedStream


def _nothing(*_args) -> None:
    return None


def messages_of(request: dict) -> list[dict]:
    """The request's messages: the prompt, and the assistant prefill when the request has one."""
    tail = [{"role": "assistant", "content": PREFILL}] if request.get("prefill") else []
    return [{"role": "user", "content": request["prompt"]}, *tail]


def chat_openai(client, request: dict, on_open=_nothing, on_text=_nothing) -> dict:
    model, messages = request["model"], messages_of(request)
    if not request.get("stream"):
        r = client.chat.completions.create(model=model, messages=messages)
        text = (r.choices[0].message.content or "") if r.choices else ""
        on_text(text)
        finish = (r.choices[0].finish_reason or "") if r.choices else ""
        return {"text": text, "model": r.model, "output_tokens": r.usage.completion_tokens if r.usage else 0,
                "finish_reason": finish, "filtered": bool(FILTERED.match(finish))}
    stream = client.chat.completions.create(model=model, messages=messages, stream=True,
                                            stream_options={"include_usage": True})
    on_open()
    text, got_model, tokens, finish = "", "", 0, ""
    for chunk in stream:
        got_model = chunk.model or got_model
        if chunk.usage:
            tokens = chunk.usage.completion_tokens or tokens
        for choice in chunk.choices or []:
            delta = choice.delta.content if choice.delta else None
            if delta:
                text += delta
                on_text(delta)
            finish = choice.finish_reason or finish
    if not finish:
        raise TruncatedStream(len(text))
    return {"text": text, "model": got_model, "output_tokens": tokens, "finish_reason": finish,
            "filtered": bool(FILTERED.match(finish))}


def chat_anthropic(client, request: dict, on_open=_nothing, on_text=_nothing) -> dict:
    body = {"model": request["model"], "max_tokens": 256, "messages": messages_of(request)}
    if not request.get("stream"):
        r = client.messages.create(**body)
        text = "".join(b.text for b in r.content or [] if b.type == "text")
        on_text(text)
        finish = r.stop_reason or ""
        return {"text": text, "model": r.model, "output_tokens": r.usage.output_tokens if r.usage else 0,
                "finish_reason": finish, "filtered": bool(FILTERED.match(finish))}
    stream = client.messages.create(**body, stream=True)
    on_open()
    text, got_model, tokens, finished, finish = "", "", 0, False, ""
    for ev in stream:
        if ev.type == "message_start":
            got_model = ev.message.model or got_model
        elif ev.type == "content_block_delta" and ev.delta.type == "text_delta":
            text += ev.delta.text
            on_text(ev.delta.text)
        elif ev.type == "message_delta":
            tokens = ev.usage.output_tokens if ev.usage else tokens
            finish = ev.delta.stop_reason or finish
        elif ev.type == "message_stop":
            finished = True
    # Whole when its stop_reason came (message_delta), message_stop or not: SPEC's no_terminator is a
    # complete answer without the sentinel, as openai's finish_reason without [DONE].
    if not finished and not finish:
        raise TruncatedStream(len(text))
    return {"text": text, "model": got_model, "output_tokens": tokens, "finish_reason": finish,
            "filtered": bool(FILTERED.match(finish))}


def _gemini_text(response) -> str:
    """The text parts of the first candidate (genai's `.text` warns on a candidate with none)."""
    for cand in response.candidates or []:
        parts = cand.content.parts if cand.content and cand.content.parts else []
        return "".join(p.text for p in parts if getattr(p, "text", None) and not getattr(p, "thought", False))
    return ""


def _gemini_finish(response) -> str:
    for cand in response.candidates or []:
        if cand.finish_reason:
            return getattr(cand.finish_reason, "value", str(cand.finish_reason))
    return ""


def chat_gemini(client, request: dict, on_open=_nothing, on_text=_nothing) -> dict:
    contents = [{"role": "user", "parts": [{"text": request["prompt"]}]}]
    if request.get("prefill"):
        contents.append({"role": "model", "parts": [{"text": PREFILL}]})
    model = request["model"]
    if not request.get("stream"):
        r = client.models.generate_content(model=model, contents=contents)
        text, finish = _gemini_text(r), _gemini_finish(r)
        on_text(text)
        tokens = r.usage_metadata.candidates_token_count if r.usage_metadata else 0
        return {"text": text, "model": r.model_version or model, "output_tokens": tokens or 0,
                "finish_reason": finish, "filtered": bool(FILTERED.match(finish))}
    stream = client.models.generate_content_stream(model=model, contents=contents)
    text, got_model, tokens, finish, opened = "", "", 0, "", False
    for chunk in stream:
        if not opened:
            opened = True
            on_open()
        got_model = chunk.model_version or got_model
        if chunk.usage_metadata and chunk.usage_metadata.candidates_token_count:
            tokens = chunk.usage_metadata.candidates_token_count
        delta = _gemini_text(chunk)
        if delta:
            text += delta
            on_text(delta)
        finish = _gemini_finish(chunk) or finish
    return {"text": text, "model": got_model or model, "output_tokens": tokens, "finish_reason": finish,
            "filtered": bool(FILTERED.match(finish))}


# Bedrock's stop reasons of its content policy and of a broken model answer (provider-wire.md section 8).
BEDROCK_FILTERED = {"content_filtered", "guardrail_intervened"}


def _bedrock_messages(request: dict) -> list[dict]:
    return [{"role": m["role"], "content": [{"text": m["content"]}]} for m in messages_of(request)]


def chat_bedrock(client, request: dict, on_open=_nothing, on_text=_nothing) -> dict:
    """boto3 converse / converse_stream. A stream is as whole as its body (SPEC's no_terminator: a clean end
    without messageStop is a complete answer); a broken body is botocore's error."""
    model, messages = request["model"], _bedrock_messages(request)
    if not request.get("stream"):
        r = client.converse(modelId=model, messages=messages)
        content = ((r.get("output") or {}).get("message") or {}).get("content") or []
        text = "".join(b.get("text", "") for b in content)
        on_text(text)
        finish = r.get("stopReason") or ""
        return {"text": text, "model": model, "output_tokens": (r.get("usage") or {}).get("outputTokens", 0),
                "finish_reason": finish, "filtered": finish in BEDROCK_FILTERED or bool(FILTERED.match(finish))}
    out = client.converse_stream(modelId=model, messages=messages)
    on_open()
    text, tokens, finish = "", 0, ""
    for event in out["stream"]:
        if "contentBlockDelta" in event:
            delta = event["contentBlockDelta"].get("delta", {}).get("text", "")
            text += delta
            on_text(delta)
        elif "messageStop" in event:
            finish = event["messageStop"].get("stopReason") or ""
        elif "metadata" in event:
            tokens = (event["metadata"].get("usage") or {}).get("outputTokens", tokens)
    return {"text": text, "model": model, "output_tokens": tokens, "finish_reason": finish,
            "filtered": finish in BEDROCK_FILTERED or bool(FILTERED.match(finish))}


CHAT = {"openai": chat_openai, "anthropic": chat_anthropic, "gemini": chat_gemini, "bedrock": chat_bedrock}


def chat(dialect: str, client, request: dict, on_open=_nothing, on_text=_nothing) -> dict:
    if dialect not in CHAT:
        raise ValueError(f"this client speaks no {dialect} (a route of another dialect needs another SDK)")
    return CHAT[dialect](client, request, on_open, on_text)
