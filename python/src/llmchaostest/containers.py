"""LlmchaosContainer: the llmchaos image under Testcontainers (the extra `pytest-llmchaostest[containers]`),
giving the same session objects as the binary-backed Server: case(PATH) -> Case, base_url(route),
finish(...), the verdicts, write_reports(folder).

    from llmchaostest.containers import LlmchaosContainer

    with LlmchaosContainer(cases="tests/cases") as llmchaos:
        with llmchaos.case("tests/cases/quota-429-falls-back.toml") as case:
            ...

Without Ryuk (its image cannot be pulled where no registry is reachable) set
TESTCONTAINERS_RYUK_DISABLED=true: the container is stopped and removed when the block ends all the same.
"""
from __future__ import annotations

import io
import secrets
import tarfile
from pathlib import Path
from typing import Any, Sequence

from docker.errors import DockerException
from testcontainers.core.config import testcontainers_config
from testcontainers.core.container import DockerContainer
from testcontainers.core.wait_strategies import CompositeWaitStrategy, HttpWaitStrategy, LogMessageWaitStrategy

from . import __version__
from .server import SESSIONS, TOKEN_ENV, ServerError, SessionClient
from .session import Case

DEFAULT_IMAGE = f"llmchaos:{__version__}"  # the image of the helper's own version (scripts/image builds it)
PORT = 8080
CASES = "/cases"  # the image's LLMCHAOS_CASES_ROOT
REPORTS = "/tmp"  # the image's LLMCHAOS_REPORTS_ROOT (writable)
READY_LINE = "listening on http://"
READY_PATH = "/__llmchaos/ready"


class LlmchaosContainer(SessionClient, DockerContainer):
    """`llmchaos serve --host 0.0.0.0 --port 8080` in the image, port 8080 published, a token of its own.

    - `image`: default `llmchaos:VERSION` (this package's version); any local name (`llmchaos:dev`).
    - `cases`: a host folder of case files, bind-mounted read-only at /cases (or, `copy_cases=True`,
      copied in before the start: for a Docker daemon that does not see this machine's files).
      `case(PATH)` sends a file under it as its path relative to /cases, any other file as its TOML
      text, and a path that is no file here as it is (a case of the image's own catalog at /cases).
    - `token`: the admin token (default: 32 random bytes, hex), passed as LLMCHAOS_ADMIN_TOKEN and sent
      as `Authorization: Bearer TOKEN` on every admin and session call.
    - `time_scale`: the server's --time-scale. `extra_args`: more arguments for `serve`.
    - `startup_timeout`: seconds for the line `listening on http://` and a 200 from /__llmchaos/ready
      (default 180: a loaded 2-core CI runner).
    Everything DockerContainer offers (with_env, with_network, ...) works before start().
    """

    def __init__(self, image: str = DEFAULT_IMAGE, cases: str | Path | None = None, *,
                 token: str | None = None, time_scale: float | None = None, extra_args: Sequence[str] = (),
                 copy_cases: bool = False, startup_timeout: float = 180.0, **kwargs: Any):
        SessionClient.__init__(self)
        DockerContainer.__init__(self, image, **kwargs)
        self.token = token or secrets.token_hex(32)
        self.cases_dir = Path(cases).resolve() if cases is not None else None
        if self.cases_dir is not None and not self.cases_dir.is_dir():
            raise NotADirectoryError(f"llmchaos cases folder not found: {self.cases_dir}")
        self._copy_cases = copy_cases
        command = ["serve", "--host", "0.0.0.0", "--port", str(PORT)]
        if time_scale is not None:
            command += ["--time-scale", repr(float(time_scale))]
        self.with_command(command + list(extra_args))
        self.with_exposed_ports(PORT)
        self.with_env(TOKEN_ENV, self.token)
        if self.cases_dir is not None and not copy_cases:
            self.with_volume_mapping(str(self.cases_dir), CASES, "ro")
        self.waiting_for(CompositeWaitStrategy(LogMessageWaitStrategy(READY_LINE),
                                               HttpWaitStrategy(PORT, READY_PATH).for_status_code(200))
                         .with_startup_timeout(int(startup_timeout)))

    def start(self) -> "LlmchaosContainer":
        if self.cases_dir is not None and self._copy_cases:
            self.with_copy_into_container(_tar_of(self.cases_dir, CASES.lstrip("/")), "/")
        try:
            DockerContainer.start(self)
        except DockerException as e:
            self.stop()
            raise ServerError(_hint(self.image, e)) from e
        except BaseException:
            self.stop()
            raise
        host = self.get_container_host_ip()
        if host == "localhost":  # the published port listens on IPv4; base URLs then name 127.0.0.1
            host = "127.0.0.1"
        self.url = f"http://{host}:{self.get_exposed_port(PORT)}"
        return self

    def _transfer_into_container(self, transferable: Any, destination_in_container: str, mode: int) -> None:
        if isinstance(transferable, _Tar):  # a whole folder, owners and modes as built by _tar_of
            assert self._container is not None
            if not self._container.put_archive(path=destination_in_container, data=transferable.data):
                raise OSError(f"could not copy the cases into the container at {CASES}")
            return
        super()._transfer_into_container(transferable, destination_in_container, mode)

    def stop(self, force: bool = True, delete_volume: bool = True) -> None:
        if self._container is not None:
            DockerContainer.stop(self, force=force, delete_volume=delete_volume)
            self._container = None

    def __enter__(self) -> "LlmchaosContainer":
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def last_output(self, n: int) -> list[str]:
        if self._container is None:
            return []
        try:
            return self._container.logs(tail=n).decode(errors="replace").splitlines()
        except Exception:  # the container is gone: nothing to show
            return []

    def _case_not_on_host(self, path: Path) -> Case:
        """A path that is no file on this machine names a case inside the container (the image's catalog)."""
        return Case(self, self.call("POST", SESSIONS, {"case_path": path.as_posix()}), path)

    reports_inside = True  # written in the container's /tmp (its reports root), copied out

    def _copy_reports_out(self, inside: str, folder: Path) -> None:
        if self._container is None:
            raise ServerError("the container is not running")
        stream, _ = self._container.get_archive(f"{REPORTS}/{inside}")
        with tarfile.open(fileobj=io.BytesIO(b"".join(stream))) as tar:
            for member in tar.getmembers():
                data = tar.extractfile(member) if member.isfile() else None
                if data is not None:  # the archive holds "<inside>/junit.xml", ...
                    (folder / Path(member.name).name).write_bytes(data.read())


def _hint(image: str, e: Exception) -> str:
    """What to do when the Docker daemon refused: Ryuk's image or ours could not be pulled."""
    said = str(e)
    if not testcontainers_config.ryuk_disabled and "ryuk" in said.lower():
        return (f"Testcontainers could not start its reaper Ryuk ({testcontainers_config.ryuk_image}): {said}\n"
                "Where Ryuk's image cannot be pulled, set TESTCONTAINERS_RYUK_DISABLED=true (the container is "
                "stopped and removed all the same).")
    if image.split(":")[0] in said or "pull access denied" in said or "not found" in said.lower():
        return (f"could not start {image}: {said}\nThe image must be on this Docker daemon (no registry holds "
                "it): scripts/image builds llmchaos:VERSION and llmchaos:dev, or pass image=NAME.")
    return f"could not start {image}: {said}"


class _Tar(bytes):
    """A tar archive to unpack at the container's root (the cases folder as /cases)."""

    @property
    def data(self) -> bytes:
        return bytes(self)


def _tar_of(folder: Path, arcname: str) -> _Tar:
    """`folder` as `arcname/...`, readable by the image's non-root user (root-owned, 0644/0755)."""
    buf = io.BytesIO()

    def readable(info: tarfile.TarInfo) -> tarfile.TarInfo:
        info.uid = info.gid = 0
        info.uname = info.gname = ""
        info.mode = 0o755 if info.isdir() else 0o644
        return info

    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(folder), arcname=arcname, filter=readable)
    return _Tar(buf.getvalue())
