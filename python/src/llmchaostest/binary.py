"""Where the llmchaos binary is: the one this wheel carries, else LLMCHAOS_BIN, else PATH."""
from __future__ import annotations

import os
import shutil
import sysconfig
from pathlib import Path

_SITE = Path(__file__).resolve().parent.parent
# The platform wheel carries it as a script; `auditwheel repair` moves the binary (it needs the grafted
# libraries) to site-packages/pytest_llmchaostest.scripts/ and puts a script that execs it on PATH.
REPAIRED = _SITE / "pytest_llmchaostest.scripts" / "llmchaos"
BUNDLED = Path(__file__).parent / "bin" / "llmchaos"  # wheels before 0.1.0's `llmchaos` command


class BinaryNotFound(RuntimeError):
    pass


def _carried() -> str | None:
    """The binary this install carries: moved by auditwheel, an older wheel's, or an unrepaired wheel's
    script (in this environment's scripts folder, listed in the distribution's RECORD)."""
    for candidate in (REPAIRED, BUNDLED):
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    try:
        from importlib.metadata import PackageNotFoundError, distribution
        files = distribution("pytest-llmchaostest").files or []
    except (ImportError, PackageNotFoundError):
        return None
    scripts = Path(sysconfig.get_path("scripts")).resolve()
    for f in files:
        if f.name == "llmchaos":
            where = Path(str(f.locate())).resolve()
            if where.parent == scripts and where.is_file() and os.access(where, os.X_OK):
                return str(where)
    return None


def find_binary(explicit: str | None = None) -> str:
    """The llmchaos executable to run. `explicit` (a path, e.g. --llmchaos-bin) wins over everything."""
    if explicit:
        return _checked(explicit, "given explicitly")
    carried = _carried()
    if carried:
        return carried
    env = os.environ.get("LLMCHAOS_BIN")
    if env:
        return _checked(env, "named by LLMCHAOS_BIN")
    on_path = shutil.which("llmchaos")
    if on_path:
        return on_path
    raise BinaryNotFound(
        "llmchaos binary not found: this install carries none (a source install), LLMCHAOS_BIN is unset "
        "and `llmchaos` is not on PATH. Install the platform wheel, or set LLMCHAOS_BIN=/path/to/llmchaos."
    )


def _checked(path: str, how: str) -> str:
    if not (os.path.isfile(path) and os.access(path, os.X_OK)):
        raise BinaryNotFound(f"llmchaos binary {how} is not an executable file: {path}")
    return path
