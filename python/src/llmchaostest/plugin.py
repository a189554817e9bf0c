"""The pytest plugin (entry point pytest11): a session-scoped `llmchaos serve` per process (so one per
xdist worker; the binary, or the image with --llmchaos-docker), the `llmchaos` fixture, the
`llmchaos_cases` marker and `--llmchaos-report DIR`."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any, Iterator

import pytest

from .server import Server, ServerError, SessionClient
from .session import Case

PARTS = ".parts"  # DIR/.parts/<worker>/: each server's four reports; several are merged into DIR at the end


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("llmchaos", "llmchaos fault-injection cases (llmchaostest)")
    group.addoption("--llmchaos-bin", default=None,
                    help="the llmchaos binary (default: the wheel's own, else LLMCHAOS_BIN, else PATH)")
    group.addoption("--llmchaos-time-scale", default=None, type=float,
                    help="the server's --time-scale: every delay and budget of a case is scripted ms x this "
                         "(default: ini llmchaos_time_scale, else 1)")
    group.addoption("--llmchaos-report", default=None, metavar="DIR",
                    help="write junit.xml, report.json, report.md and report.html of every case judged")
    group.addoption("--llmchaos-docker", default=None, metavar="IMAGE",
                    help="run the server from this image (Testcontainers; pytest-llmchaostest[containers]) "
                         "instead of the binary (default: ini llmchaos_docker, else the binary)")
    group.addoption("--llmchaos-cases-root", default=None, metavar="DIR",
                    help="the folder the server reads cases from (mounted at /cases with --llmchaos-docker; "
                         "default: ini llmchaos_cases_root, else the rootdir and every llmchaos_cases folder's "
                         "common parent)")
    parser.addini("llmchaos_time_scale", "default --llmchaos-time-scale", default="1")
    parser.addini("llmchaos_docker", "default --llmchaos-docker (an image name)", default="")
    parser.addini("llmchaos_cases_root", "default --llmchaos-cases-root (relative: to the rootdir)", default="")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "llmchaos_cases(folder): run the test once per case file of the folder "
                                       "(the test takes the `llmchaos_case_path` argument)")
    report = config.getoption("--llmchaos-report")
    if report and not _is_worker(config):
        parts = Path(report) / PARTS
        if parts.exists():
            shutil.rmtree(parts)
        parts.mkdir(parents=True)


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


def _worker_id(config: pytest.Config) -> str:
    return getattr(config, "workerinput", {}).get("workerid", "main")


def _case_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*.toml") if p.is_file())


def _resolve(path: str | Path, near: Path, root: Path) -> Path:
    """A case path as written in a test: absolute, else beside the test file, else under the rootdir."""
    p = Path(path)
    if p.is_absolute():
        return p
    for base in (near, root):
        if (base / p).exists():
            return base / p
    return near / p


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("llmchaos_cases")
    if marker is None:
        return
    if "llmchaos_case_path" not in metafunc.fixturenames:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: @pytest.mark.llmchaos_cases needs the test to "
                                "take the `llmchaos_case_path` argument")
    if len(marker.args) != 1:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: @pytest.mark.llmchaos_cases takes one folder")
    folder = _resolve(marker.args[0], Path(metafunc.definition.path).parent, metafunc.config.rootpath)
    files = _case_files(folder) if folder.is_dir() else []
    if not files:
        raise pytest.UsageError(f"{metafunc.definition.nodeid}: @pytest.mark.llmchaos_cases({marker.args[0]!r}): "
                                f"no case files (*.toml) in {folder}")
    ids = [f.relative_to(folder).with_suffix("").as_posix() for f in files]
    _case_folders(metafunc.config).add(folder.resolve())
    metafunc.parametrize("llmchaos_case_path", files, ids=ids)


def _case_folders(config: pytest.Config) -> set[Path]:
    """The folders of every @pytest.mark.llmchaos_cases collected (their cases must be under the root)."""
    if not hasattr(config, "_llmchaos_case_folders"):
        config._llmchaos_case_folders = set()  # type: ignore[attr-defined]
    return config._llmchaos_case_folders  # type: ignore[attr-defined]


def cases_root(config: pytest.Config) -> Path:
    """The server's cases root: --llmchaos-cases-root, else ini llmchaos_cases_root (relative to the
    rootdir), else the common parent of the rootdir and every llmchaos_cases folder collected (a case
    file names its policy with `../policies/x.toml`, so the folder's parent comes along). Never the
    filesystem's root: then the rootdir, and cases elsewhere are sent as their TOML text."""
    given = config.getoption("--llmchaos-cases-root")
    if given:
        return Path(given).resolve()
    ini = config.getini("llmchaos_cases_root")
    if ini:
        return (config.rootpath / ini).resolve()
    # The ini file's folder, else the folder pytest was started in: pytest takes an option's existing path
    # (`--llmchaos-report DIR`, before it knows the option) into its choice of rootdir, which can then sit
    # far above the project (and miss its ini file), in a folder the image's user cannot enter.
    inipath = getattr(config, "inipath", None)
    invoked = getattr(getattr(config, "invocation_params", None), "dir", None)
    root = Path(inipath).parent if inipath else Path(invoked) if invoked else config.rootpath
    root = root.resolve()
    parents = [str(f.parent) for f in sorted(_case_folders(config))]
    # the rootdir is left out when it shares nothing but "/" with the cases (pytest takes an existing
    # path given as an option's value, e.g. --llmchaos-report DIR, into its rootdir's choice)
    for group in ([str(root), *parents], parents):
        if group:
            common = Path(os.path.commonpath(group))
            if common.parent != common:
                return common
    return root


def docker_image(config: pytest.Config) -> str:
    return config.getoption("--llmchaos-docker") or config.getini("llmchaos_docker")


@pytest.fixture(scope="session")
def llmchaos_server(request: pytest.FixtureRequest) -> Iterator[SessionClient]:
    """`llmchaos serve --port 0` (or, with --llmchaos-docker, the image under Testcontainers), one per
    test process (per xdist worker), stopped at the session's end."""
    config = request.config
    scale = config.getoption("--llmchaos-time-scale")
    if scale is None:
        scale = float(config.getini("llmchaos_time_scale"))
    image = docker_image(config)
    server: SessionClient
    if image:
        try:
            from .containers import LlmchaosContainer
        except ImportError as e:
            raise pytest.UsageError(f"--llmchaos-docker needs Testcontainers: pip install "
                                    f"'pytest-llmchaostest[containers]' ({e})") from None
        server = LlmchaosContainer(image, cases=cases_root(config), time_scale=scale).start()
    else:
        server = Server(binary=config.getoption("--llmchaos-bin"), time_scale=scale,
                        cases_root=cases_root(config)).start()
    try:
        yield server
    finally:
        try:
            _save_report_part(config, server)
        finally:
            server.stop()


class Chaos:
    """The `llmchaos` fixture: `llmchaos.case(PATH)` opens a session (a context manager yielding a Case)."""

    def __init__(self, server: SessionClient, near: Path, root: Path):
        self.server = server
        self._near, self._root = near, root
        self._open: list[Case] = []

    @property
    def url(self) -> str:
        return self.server.url

    def case(self, path: str | Path) -> Case:
        opened = self.server.case(_resolve(path, self._near, self._root))
        self._open.append(opened)
        return opened

    def _close(self) -> None:
        for c in self._open:
            c.end()


@pytest.fixture
def llmchaos(llmchaos_server: SessionClient, request: pytest.FixtureRequest) -> Iterator[Chaos]:
    chaos = Chaos(llmchaos_server, Path(request.node.path).parent, request.config.rootpath)
    yield chaos
    chaos._close()


def _save_report_part(config: pytest.Config, server: SessionClient) -> None:
    report = config.getoption("--llmchaos-report")
    if not report or not server.judged:
        return
    try:
        server.write_reports(Path(report) / PARTS / _worker_id(config))
    except ServerError as e:
        config._llmchaos_report_error = f"llmchaos: the server gave no report ({e})"  # type: ignore[attr-defined]


def _one_run(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Each server's report.json (one per xdist worker) as one run for `report merge`: the cases of all,
    in worker order, a case judged on two servers listed once per server. The reader recomputes every
    total from the cases; the catalog (which merge requires) is named after the servers' cases."""
    if len(reports) == 1:
        return reports[0]
    run = dict(reports[0])
    run["cases"], names = [], set()
    for worker, report in enumerate(reports):
        for case in report.get("cases", []):
            if case.get("name") in names:  # judged on two workers: one entry each
                case = {**case, "name": f"{case.get('name')} (server {worker + 1})"}
            names.add(case.get("name"))
            run["cases"].append(case)
    run["catalog"] = "sessions-" + "-".join(str(r.get("catalog", "")) for r in reports)[:200]
    run["catalog_cases"] = len(run["cases"])
    return run


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    report = config.getoption("--llmchaos-report")
    if not report or _is_worker(config):
        return
    out = Path(report)
    parts = sorted((out / PARTS).glob("*/report.json"))
    if not parts:
        config._llmchaos_report_note = (getattr(config, "_llmchaos_report_error", "")  # type: ignore[attr-defined]
                                        or f"llmchaos: no case was judged, no report written to {out}")
        return
    if len(parts) == 1:  # one server: its four reports are the session's
        for written in parts[0].parent.iterdir():
            shutil.copy(written, out / written.name)
        config._llmchaos_report_note = f"llmchaos: reports of 1 server(s) written to {out}"  # type: ignore[attr-defined]
        return
    from .binary import find_binary
    merged = out / PARTS / "all-servers.json"
    merged.write_text(json.dumps(_one_run([json.loads(p.read_text()) for p in parts])))
    cmd = [find_binary(config.getoption("--llmchaos-bin")), "report", "merge", str(merged), "--report-dir", str(out)]
    done = subprocess.run(cmd, capture_output=True, text=True)
    # exit 1 = some case failed: the reports are written all the same; 2 = they could not be merged
    note = f"llmchaos: reports of {len(parts)} server(s) written to {out}" if done.returncode in (0, 1) else (
        f"llmchaos: `{' '.join(cmd)}` failed ({done.returncode}): {done.stderr.strip()}")
    config._llmchaos_report_note = note  # type: ignore[attr-defined]


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    note = getattr(config, "_llmchaos_report_note", None)
    if note:
        terminalreporter.write_line(note)
