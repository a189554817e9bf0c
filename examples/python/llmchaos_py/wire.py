"""What the process's HTTP layer saw of the current attempt, for every Python library alike.

Each library builds its own httpx (or httpx2) client; the hardened clients watch them all at the
transport (HTTPTransport.handle_request / AsyncHTTPTransport.handle_async_request), the Python
counterpart of the timed `fetch` examples/sdk/lib/hardened.mjs hands each library:
  - the request's time budget starts at its first send (a fresh interpreter spends a while importing
    the library; a long-lived service does not);
  - the attempt timeout bounds the wait for the response headers and every gap in the body (httpx's
    per-read timeout), whatever timeout the library set;
  - the last response's status, headers and (error) body are kept, for libraries whose errors drop them;
  - a body that fails to read to its end (a cut, a reset, an idle timeout) is recorded as broken even
    when the library ends it quietly.
"""
from __future__ import annotations

import importlib
import time
from dataclasses import dataclass, field

ERROR_BODY_KEEP = 4096


@dataclass
class Attempt:
    """One attempt's wire facts. `response`: (status, headers) once the headers arrived."""

    sends: int = 0
    response: tuple | None = None
    error_body: bytes = b""
    transport_error: BaseException | None = None
    body_broken: bool = False
    body_error: BaseException | None = None
    opened: bool = False
    visible: int = 0

    def header(self, name: str):
        return self.response[1].get(name) if self.response else None


@dataclass
class Wire:
    timeout_s: float | None = None
    started: float | None = None
    attempt: Attempt = field(default_factory=Attempt)

    def new_attempt(self) -> Attempt:
        self.attempt = Attempt()
        return self.attempt

    def elapsed_s(self) -> float:
        return 0.0 if self.started is None else time.monotonic() - self.started

    # -- the hooks the patched transports call --
    def on_send(self, request) -> None:
        if self.started is None:
            self.started = time.monotonic()
        self.attempt.sends += 1
        if self.timeout_s is not None:
            t = self.timeout_s
            request.extensions = {**request.extensions, "timeout": {"connect": t, "read": t, "write": t, "pool": t}}

    def on_response(self, response) -> None:
        self.attempt.response = (response.status_code, response.headers)

    def on_chunk(self, status: int, chunk: bytes) -> None:
        a = self.attempt
        if status >= 400 and len(a.error_body) < ERROR_BODY_KEEP:
            a.error_body += chunk[: ERROR_BODY_KEEP - len(a.error_body)]

    def on_body_error(self, err: BaseException) -> None:
        self.attempt.body_broken, self.attempt.body_error = True, err


_WIRE: Wire | None = None


def _stream_classes(mod):
    """Byte streams of module `mod` (httpx or httpx2) that report to the current wire."""

    class Watched(mod.SyncByteStream):
        def __init__(self, inner, status):
            self.inner, self.status = inner, status

        def __iter__(self):
            try:
                for chunk in self.inner:
                    _WIRE.on_chunk(self.status, chunk)
                    yield chunk
            except Exception as err:
                _WIRE.on_body_error(err)
                raise

        def close(self):
            self.inner.close()

    class AsyncWatched(mod.AsyncByteStream):
        def __init__(self, inner, status):
            self.inner, self.status = inner, status

        async def __aiter__(self):
            try:
                async for chunk in self.inner:
                    _WIRE.on_chunk(self.status, chunk)
                    yield chunk
            except Exception as err:
                _WIRE.on_body_error(err)
                raise

        async def aclose(self):
            await self.inner.aclose()

    return Watched, AsyncWatched


def _patch(mod) -> None:
    watched, async_watched = _stream_classes(mod)
    sync_orig = mod.HTTPTransport.handle_request
    async_orig = mod.AsyncHTTPTransport.handle_async_request

    def handle_request(self, request):
        _WIRE.on_send(request)
        try:
            response = sync_orig(self, request)
        except Exception as err:
            _WIRE.attempt.transport_error = err
            raise
        _WIRE.on_response(response)
        response.stream = watched(response.stream, response.status_code)
        return response

    async def handle_async_request(self, request):
        _WIRE.on_send(request)
        try:
            response = await async_orig(self, request)
        except Exception as err:
            _WIRE.attempt.transport_error = err
            raise
        _WIRE.on_response(response)
        response.stream = async_watched(response.stream, response.status_code)
        return response

    mod.HTTPTransport.handle_request = handle_request
    mod.AsyncHTTPTransport.handle_async_request = handle_async_request


def install(timeout_s: float | None) -> Wire:
    """Watches every httpx / httpx2 transport of this process; returns the wire (one per process)."""
    global _WIRE
    if _WIRE is None:
        _WIRE = Wire(timeout_s=timeout_s)
        for name in ("httpx", "httpx2"):
            try:
                _patch(importlib.import_module(name))
            except ImportError:
                continue
    return _WIRE


def watch_botocore(client, service: str = "bedrock-runtime") -> None:
    """boto3 sends through urllib3, not httpx: the same facts from botocore's events for `client` (its
    read_timeout is the attempt timeout). A plain body shorter than its Content-Length is broken: botocore
    parses what came and returns it (an empty Converse answer for a cut body) without an error."""

    def sent(**_):
        _WIRE.started = _WIRE.started or time.monotonic()
        _WIRE.attempt.sends += 1

    def answered(response_dict, **_):
        a = _WIRE.attempt
        status, headers, body = response_dict["status_code"], response_dict["headers"], response_dict.get("body")
        a.response = (status, headers)
        if isinstance(body, bytes):
            if status >= 400:
                a.error_body = body[:ERROR_BODY_KEEP]
            length = headers.get("content-length", "")
            if length.isdigit() and len(body) < int(length):
                a.body_broken, a.body_error = True, EOFError(f"{len(body)} of {length} body bytes")

    def failed(exception=None, response_dict=None, **_):
        if exception is not None and response_dict is None and _WIRE.attempt.response is None:
            _WIRE.attempt.transport_error = exception

    events = client.meta.events
    events.register(f"before-send.{service}.*", sent)
    events.register(f"before-parse.{service}.*", answered)
    events.register(f"response-received.{service}.*", failed)


def cause_chain(err: BaseException | None, depth: int = 8):
    """err, its cause, its cause's cause... (explicit or implicit)."""
    while err is not None and depth > 0:
        yield err
        err, depth = err.__cause__ or err.__context__, depth - 1
