"""One `llmchaos serve --port 0` process and a thin client of its session API."""
from __future__ import annotations

import json
import subprocess
import threading
import urllib.error
import urllib.request
from collections import deque
from pathlib import Path
from typing import Any, Sequence

from .binary import find_binary
from .session import Case

SESSIONS = "/__llmchaos/sessions"


class ServerError(RuntimeError):
    pass


class Server:
    """`llmchaos serve --port 0` on loopback; `url` is read from its first stdout line."""

    def __init__(self, binary: str | None = None, time_scale: float | None = None,
                 extra_args: Sequence[str] = (), start_timeout: float = 30.0):
        self.binary = find_binary(binary)
        self.args = [self.binary, "serve", "--port", "0"]
        if time_scale is not None:
            self.args += ["--time-scale", repr(float(time_scale))]
        self.args += list(extra_args)
        self.start_timeout = start_timeout
        self.url = ""
        self.output: deque[str] = deque(maxlen=200)  # the server's last lines, for error messages
        self._proc: subprocess.Popen[str] | None = None
        self.judged: list[dict[str, Any]] = []  # every verdict this server returned, in order

    def start(self) -> "Server":
        self._proc = subprocess.Popen(self.args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, bufsize=1)
        first: list[str] = []
        got = threading.Event()

        def pump() -> None:
            assert self._proc and self._proc.stdout
            for line in self._proc.stdout:
                line = line.rstrip("\n")
                if not got.is_set() and line.startswith("listening on "):
                    first.append(line)
                    got.set()
                self.output.append(line)
            got.set()  # the server exited before listening

        threading.Thread(target=pump, name="llmchaos-serve-output", daemon=True).start()
        if not got.wait(self.start_timeout) or not first:
            self.stop()
            raise ServerError(f"`{' '.join(self.args)}` did not print its URL within {self.start_timeout:g} s; "
                              f"its output:\n" + "\n".join(self.output))
        self.url = first[0][len("listening on "):].strip()
        return self

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # -- the session API ------------------------------------------------------------------------------
    def case(self, path: str | Path) -> Case:
        """A session over the case at `path` (a context manager: see Case)."""
        path = Path(path)
        if not path.is_file():
            raise FileNotFoundError(f"llmchaos case not found: {path}")
        facts = self.call("POST", SESSIONS, {"case_path": str(path.resolve())})
        return Case(self, facts, path)

    def write_reports(self, folder: str | Path) -> dict[str, Any]:
        """junit.xml, report.json, report.md, report.html of every session this server judged, into folder
        (POST /__llmchaos/sessions/reports); answers {"written", "cases", "passed", "failed", ...}."""
        folder = Path(folder).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        return self.call("POST", SESSIONS + "/reports", {"dir": str(folder)})

    def call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.url + path, data=data, method=method,
                                     headers={"content-type": "application/json"} if data else {})
        try:
            with urllib.request.urlopen(req, timeout=120) as answer:
                text = answer.read().decode()
        except urllib.error.HTTPError as e:
            raise ServerError(f"{method} {path}: {e.code}: {_error_text(e.read().decode(errors='replace'))}") from None
        except urllib.error.URLError as e:
            raise ServerError(f"{method} {self.url}{path}: {e.reason} (server output:\n"
                              + "\n".join(list(self.output)[-20:]) + ")") from None
        return json.loads(text) if text else {}


def _error_text(body: str) -> str:
    try:
        parsed = json.loads(body)
    except ValueError:
        return body
    if isinstance(parsed, dict) and "error" in parsed:
        return str(parsed["error"])
    return body
