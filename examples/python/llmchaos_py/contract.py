"""The exec driver's contract (harness/drivers/README.md): the environment a request runs with and the
last stdout line that says what the caller saw. Like examples/sdk/lib/common.mjs."""
from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import dataclass, field

# The assistant prefill a `prefill` request ends with (client/src/codec_detail.hpp's prefill_text).
PREFILL = "{"

# A finish reason of the provider's content policy: a hardened client fails it closed (owner policy).
FILTERED = re.compile(r"^(content[_-]?filter|refusal|safety|recitation|prohibited_content|blocklist|spii)$", re.I)


@dataclass
class Route:
    name: str
    base_url: str
    dialect: str


@dataclass
class Env:
    request: dict
    operation_id: str
    primary: Route
    fallbacks: list[Route]
    time_scale: float = 1.0
    policy: dict | None = None
    headers: dict = field(default_factory=dict)

    def routes(self, dialects) -> list[Route]:
        """The primary then the fallbacks, only those of `dialects` (a route of another dialect needs
        another library)."""
        return [r for r in [self.primary, *self.fallbacks] if r.dialect in dialects]


def env_route(name: str) -> str:
    return re.sub(r"[^A-Z0-9]", "_", name.upper())


def _need(environ, key: str) -> str:
    if key not in environ:
        raise SystemExit(f"{key} is not set: run this under `llmchaos run --driver exec`")
    return environ[key]


def read_env(environ=None) -> Env:
    """Everything the harness passes: the request, the routes in the order the team's policy tries them."""
    environ = os.environ if environ is None else environ

    def route(name: str) -> Route:
        key = env_route(name)
        return Route(name, _need(environ, f"LLMCHAOS_{key}_BASE_URL"), _need(environ, f"LLMCHAOS_{key}_DIALECT"))

    request = json.loads(_need(environ, "LLMCHAOS_REQUEST"))
    operation_id = environ.get("LLMCHAOS_OPERATION_ID") or request.get("operation_id") or ""
    policy = environ.get("LLMCHAOS_POLICY_JSON")
    try:
        scale = float(environ.get("LLMCHAOS_SDK_TIME_SCALE", "1")) or 1.0
    except ValueError:
        scale = 1.0
    return Env(
        request=request,
        operation_id=operation_id,
        primary=route(_need(environ, "LLMCHAOS_PRIMARY")),
        fallbacks=[route(n) for n in environ.get("LLMCHAOS_FALLBACK", "").split(",") if n],
        time_scale=scale,
        policy=json.loads(policy) if policy else None,
        # The harness ties the attempts of one request together by this header (no library sends one).
        headers={"Idempotency-Key": operation_id},
    )


def report(outcome: str, **fields) -> None:
    """The contract's last stdout line. The process exits right after it (os._exit): in a service the
    call is over when it returns; an HTTP pool's or a framework's background threads are not the call."""
    sys.stdout.write(json.dumps({"outcome": outcome, **fields}) + "\n")
    sys.stdout.flush()
    sys.stderr.flush()


def finish(code: int) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def describe(err: BaseException) -> str:
    """One line for stderr (the report keeps it): the class, a status, the message and the cause chain."""
    parts = [type(err).__name__]
    status = getattr(err, "status_code", None) or getattr(err, "code", None)
    if status:
        parts.append(str(status))
    parts.append(str(err)[:300])
    cause, depth = err.__cause__ or err.__context__, 0
    while cause is not None and depth < 4:
        parts.append(f"cause: {type(cause).__name__} {str(cause)[:200]}")
        cause, depth = cause.__cause__ or cause.__context__, depth + 1
    return " | ".join(p for p in parts if p)


class ContentFiltered(Exception):
    """An answer the provider ended for its content policy (the chat functions' `filtered`)."""

    def __init__(self, reason: str):
        super().__init__(f"the answer was ended by the provider's content policy (finish reason {reason})")


class TruncatedStream(Exception):
    """A stream that stopped before its dialect's end (no finish reason / message_stop)."""

    def __init__(self, visible: int):
        super().__init__(f"the stream ended without its final event after {visible} visible text chars")
