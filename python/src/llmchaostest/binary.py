"""Where the llmchaos binary is: the one this wheel carries, else LLMCHAOS_BIN, else PATH."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

BUNDLED = Path(__file__).parent / "bin" / "llmchaos"


class BinaryNotFound(RuntimeError):
    pass


def find_binary(explicit: str | None = None) -> str:
    """The llmchaos executable to run. `explicit` (a path, e.g. --llmchaos-bin) wins over everything."""
    if explicit:
        return _checked(explicit, "given explicitly")
    if BUNDLED.is_file() and os.access(BUNDLED, os.X_OK):
        return str(BUNDLED)
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
