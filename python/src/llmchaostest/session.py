"""A session of the server's session API: one case, its routes' base URLs, and the checker's verdict."""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Mapping

if TYPE_CHECKING:
    from .server import SessionClient


class CaseFailed(AssertionError):
    """Raised when a case block ends without a passing verdict; the message is the checker's own."""


def _skip(message: str) -> None:
    """A case a live server cannot judge (exact_time: a virtual clock only) is a skip under pytest."""
    try:
        import pytest
    except ImportError:
        raise CaseFailed(message) from None
    pytest.skip(message)


class Verdict:
    """The checker's verdict (`POST .../finish`'s answer); `raw` is the JSON as the server sent it."""

    def __init__(self, raw: Mapping[str, Any]):
        self.raw = dict(raw)

    verdict = property(lambda self: self.raw.get("verdict", "unknown"))
    passed = property(lambda self: self.verdict == "pass")
    expected = property(lambda self: self.raw.get("expected"))
    observed = property(lambda self: self.raw.get("observed"))
    actions = property(lambda self: list(self.raw.get("actions", [])))
    checks = property(lambda self: list(self.raw.get("checks", [])))
    timeline = property(lambda self: self.raw.get("timeline"))

    @property
    def failed_checks(self) -> list[dict[str, Any]]:
        return [c for c in self.checks if not c.get("passed")]

    def message(self, case_name: str = "") -> str:
        """Case, verdict, expected vs observed, then each failed check with the checker's message."""
        name = self.raw.get("case") or case_name
        where = f" ({self.raw['file']})" if self.raw.get("file") else ""
        lines = [f"llmchaos case \"{name}\"{where}: {self.verdict}: expected {self.expected}, observed {self.observed}"]
        for key in ("reason", "unknown_reason"):
            if self.raw.get(key):
                lines.append(f"  {key.replace('_', ' ')}: {self.raw[key]}")
        for check in self.failed_checks:
            lines.append(f"  check {check.get('name')} failed: {check.get('message')}")
        if self.actions:
            lines.append(f"  actions: {', '.join(self.actions)}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"Verdict({self.verdict!r}, expected={self.expected!r}, observed={self.observed!r})"


class Case:
    """One session: `base_url(route)`, `request`, `policy`, then `finish(...)` with what the code saw.

    As a context manager, leaving the block without a passing verdict raises CaseFailed (the checker's
    messages), and the session is ended either way.
    """

    def __init__(self, server: "SessionClient", facts: Mapping[str, Any], path: Path):
        self.server = server
        self.facts = dict(facts)
        self.path = path
        self.id: str = self.facts["id"]
        self.namespace: str = self.facts.get("namespace", "")
        self.routes: dict[str, dict[str, Any]] = dict(self.facts.get("routes", {}))
        self.request: dict[str, Any] = dict(self.facts.get("request", {}))
        self.policy: dict[str, Any] = dict(self.facts.get("policy", {}))
        self.verdict: Verdict | None = None
        self._ended = False

    @property
    def name(self) -> str:
        return str(self.facts.get("case") or self.path.stem)

    @property
    def primary(self) -> str:
        """The policy's primary route."""
        return str(self.facts.get("primary") or self.policy.get("workflow", {}).get("primary", ""))

    @property
    def fallback(self) -> list[str]:
        """The policy's fallback routes, in order."""
        got = self.facts.get("fallback")
        return list(got if got is not None else self.policy.get("workflow", {}).get("fallback", []))

    @property
    def route_order(self) -> list[str]:
        """Primary, then each fallback: the order a client tries the routes."""
        return [self.primary, *self.fallback]

    @property
    def operation_id(self) -> str:
        """Send it as Idempotency-Key: the ledger ties attempts to the request by it."""
        return str(self.request.get("operation_id", ""))

    def base_url(self, route: str) -> str:
        """What an SDK takes as its base URL for `route` (openai: .../v1; anthropic, gemini: without)."""
        if route not in self.routes:
            raise KeyError(f"case {self.path} has no route {route!r}; its routes: {', '.join(sorted(self.routes))}")
        return str(self.routes[route]["base_url"])

    def dialect(self, route: str) -> str:
        self.base_url(route)
        return str(self.routes[route].get("dialect", ""))

    def finish(self, outcome: str | None = None, text: str | None = None, route: str | None = None,
               model: str | None = None, *, seen: Iterable[Mapping[str, Any]] | None = None,
               **more: Any) -> Verdict:
        """What the caller saw (the exec contract's last line), judged. A sequence case: `seen=[{...}, ...]`."""
        if seen is not None:
            body: Any = [dict(s) for s in seen]
        else:
            if outcome is None:
                raise TypeError("finish() needs outcome=... (or seen=[...] for a sequence case)")
            body = {k: v for k, v in dict(outcome=outcome, text=text, route=route, model=model, **more).items()
                    if v is not None}
        self.verdict = Verdict(self.server.call("POST", f"/__llmchaos/sessions/{self.id}/finish", body))
        self.server.judged.append(self.verdict.raw)
        return self.verdict

    @property
    def alive_after(self) -> bool:
        """The case checks the client still works after it ([checks] alive_after): call alive(), send
        one more request with the key it returns, and finish with one more object."""
        return bool(self.facts.get("alive_after"))

    def alive(self) -> str:
        """POST .../alive: the routes turn healthy; returns the probe request's Idempotency-Key."""
        return str(self.server.call("POST", f"/__llmchaos/sessions/{self.id}/alive").get("operation_id", ""))

    def ledger(self) -> dict[str, Any]:
        """GET /__llmchaos/sessions/{id}: the routes and the ledger so far."""
        return self.server.call("GET", f"/__llmchaos/sessions/{self.id}")

    def end(self) -> None:
        if self._ended:
            return
        self._ended = True
        try:
            self.server.call("DELETE", f"/__llmchaos/sessions/{self.id}")
        except Exception:  # already gone (finished sessions may be ended by the server): nothing to free
            pass

    def check(self) -> Verdict:
        """The verdict, or CaseFailed with the checker's messages when there is none or it did not pass."""
        __tracebackhide__ = True
        if self.verdict is not None and self.verdict.verdict == "n/a":
            _skip(f"llmchaos case \"{self.name}\": n/a: {self.verdict.raw.get('reason') or self.facts.get('not_run', '')}")
        if self.verdict is None:
            raise CaseFailed(f"llmchaos case \"{self.name}\" ({self.path}): the block ended without "
                             "case.finish(outcome=...): nothing was judged")
        if not self.verdict.passed:
            raise CaseFailed(self.verdict.message(self.name))
        return self.verdict

    def __enter__(self) -> "Case":
        return self

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> None:
        __tracebackhide__ = True
        try:
            if exc_type is None:
                self.check()
        finally:
            self.end()
