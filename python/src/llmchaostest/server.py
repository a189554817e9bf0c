"""The session API's client (SessionClient: call(), case(), write_reports()), shared by the two ways to
run the server: one `llmchaos serve --port 0` process on loopback (Server, here) and the image under
Testcontainers (LlmchaosContainer, llmchaostest.containers)."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
import threading
import urllib.error
import urllib.request
import uuid
from collections import deque
from functools import lru_cache
from pathlib import Path
from typing import Any, Sequence

from .binary import find_binary
from .session import Case

SESSIONS = "/__llmchaos/sessions"
TOKEN_ENV = "LLMCHAOS_ADMIN_TOKEN"


class ServerError(RuntimeError):
    pass


class SessionClient:
    """A client of a running server's session API at `url`.

    Every call sends `Authorization: Bearer TOKEN` when `token` is set. `cases_dir` is the host folder
    the server sees as its cases root: a case file under it is sent as `{"case_path": RELATIVE}` (so a
    server in a container finds it under its own root); a case file anywhere else is sent as its TOML
    text (a `policy = "..."` file it names then resolves on the server's side, against its root).
    Without `cases_dir` the path is sent absolute, as the file is on the server's own machine.
    """

    url: str = ""
    token: str | None = None
    cases_dir: Path | None = None

    def __init__(self) -> None:
        self.judged: list[dict[str, Any]] = []  # every verdict this server returned, in order

    def case(self, path: str | Path) -> Case:
        """A session over the case at `path` (a context manager: see Case)."""
        path = Path(path)
        if not path.is_file():
            return self._case_not_on_host(path)
        where = path.resolve()
        if self.cases_dir is None:
            facts = self.call("POST", SESSIONS, {"case_path": str(where)})
        elif where.is_relative_to(self.cases_dir):
            facts = self.call("POST", SESSIONS, {"case_path": where.relative_to(self.cases_dir).as_posix()})
        else:
            facts = self.call("POST", SESSIONS, text=where.read_text(), content_type="application/toml")
        return Case(self, facts, path)

    def _case_not_on_host(self, path: Path) -> Case:
        raise FileNotFoundError(f"llmchaos case not found: {path}")

    def write_reports(self, folder: str | Path) -> dict[str, Any]:
        """junit.xml, report.json, report.md, report.html of every session this server judged, into folder
        (POST /__llmchaos/sessions/reports); answers {"written", "cases", "passed", "failed", ...}.

        A server with a reports root of its own (a private temporary folder, the container's /tmp) writes
        them in a new folder inside it, then they are copied out into `folder`."""
        folder = Path(folder).resolve()
        folder.mkdir(parents=True, exist_ok=True)
        if not self.reports_inside:
            return self.call("POST", SESSIONS + "/reports", {"dir": str(folder)})
        inside = f"reports-{uuid.uuid4().hex[:12]}"
        answer = self.call("POST", SESSIONS + "/reports", {"dir": inside})
        self._copy_reports_out(inside, folder)
        written = answer.get("written")
        if isinstance(written, list):
            answer["written"] = [str(folder / Path(str(w)).name) for w in written]
        answer["dir"] = str(folder)
        return answer

    reports_inside = False  # True: reports are written inside the server's reports root, then copied out

    def _copy_reports_out(self, inside: str, folder: Path) -> None:
        raise NotImplementedError

    def headers(self) -> dict[str, str]:
        """The headers every admin and session call carries (the token, when there is one)."""
        return {"authorization": f"Bearer {self.token}"} if self.token else {}

    def call(self, method: str, path: str, body: Any = None, *, text: str | None = None,
             content_type: str = "application/json") -> Any:
        """One admin/session API call: `body` is sent as JSON (or `text` as it is); answers the JSON reply."""
        data = text.encode() if text is not None else None if body is None else json.dumps(body).encode()
        headers = self.headers()
        if data is not None:
            headers["content-type"] = content_type
        req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(req, timeout=120) as answer:
                reply = answer.read().decode()
        except urllib.error.HTTPError as e:
            raise ServerError(f"{method} {path}: {e.code}: {_error_text(e.read().decode(errors='replace'))}") from None
        except urllib.error.URLError as e:
            raise ServerError(f"{method} {self.url}{path}: {e.reason} (server output:\n"
                              + "\n".join(self.last_output(20)) + ")") from None
        return json.loads(reply) if reply else {}

    def last_output(self, n: int) -> list[str]:
        """The server's last `n` lines of output, for error messages."""
        return []


class Server(SessionClient):
    """`llmchaos serve --port 0` on loopback; `url` is read from its first stdout line.

    `token` (default: LLMCHAOS_ADMIN_TOKEN from the environment) is handed to the server in its
    environment and sent on every call. `cases_root`: the server's `--cases-root` (a session's case must
    be under it; default the working directory, as the server's own default).
    """

    def __init__(self, binary: str | None = None, time_scale: float | None = None,
                 extra_args: Sequence[str] = (), start_timeout: float = 30.0, *,
                 token: str | None = None, cases_root: str | Path | None = None):
        super().__init__()
        self.binary = find_binary(binary)
        self.args = [self.binary, "serve", "--port", "0"]
        if time_scale is not None:
            self.args += ["--time-scale", repr(float(time_scale))]
        self.token = token if token is not None else (os.environ.get(TOKEN_ENV) or None)
        self._reports_root: str | None = None
        if _serve_knows(self.binary, "--cases-root"):  # a binary that confines its paths (issue 42)
            self.cases_dir = Path(cases_root if cases_root is not None else os.getcwd()).resolve()
            self.args += ["--cases-root", str(self.cases_dir)]
            self.reports_inside = True  # a private --reports-root, made at start()
        self.args += list(extra_args)
        self.start_timeout = start_timeout
        self.output: deque[str] = deque(maxlen=200)  # the server's last lines, for error messages
        self._proc: subprocess.Popen[str] | None = None

    def last_output(self, n: int) -> list[str]:
        return list(self.output)[-n:]

    def start(self) -> "Server":
        args = list(self.args)
        if self.reports_inside:
            self._reports_root = tempfile.mkdtemp(prefix="llmchaos-reports-")
            args += ["--reports-root", self._reports_root]
        env = dict(os.environ)
        if self.token:
            env[TOKEN_ENV] = self.token  # not on the command line, where `ps` shows it
        self._proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                      stderr=subprocess.STDOUT, text=True, bufsize=1, env=env)
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

    def _copy_reports_out(self, inside: str, folder: Path) -> None:
        assert self._reports_root is not None
        written = Path(self._reports_root) / inside
        for f in written.iterdir():
            shutil.copy(f, folder / f.name)
        shutil.rmtree(written, ignore_errors=True)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is not None:
            proc.terminate()
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        if self._reports_root:
            shutil.rmtree(self._reports_root, ignore_errors=True)
            self._reports_root = None

    def __enter__(self) -> "Server":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@lru_cache(maxsize=None)
def _serve_knows(binary: str, option: str) -> bool:
    """Whether this binary's `serve` takes `option` (an older binary than the helper does not)."""
    try:
        done = subprocess.run([binary, "serve", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return option in done.stdout + done.stderr


def _error_text(body: str) -> str:
    try:
        parsed = json.loads(body)
    except ValueError:
        return body
    if isinstance(parsed, dict) and "error" in parsed:
        return str(parsed["error"])
    return body
