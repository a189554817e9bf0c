"""A platform wheel when LLMCHAOS_WHEEL_BINARY names the llmchaos binary to carry (scripts/package);
a pure-Python wheel (binary from LLMCHAOS_BIN or PATH) otherwise.

The binary goes in as a shared script (the wheel's `.data/scripts/llmchaos`), so `pip install` puts an
`llmchaos` command on the environment's PATH, as ruff's and uv's wheels do. `auditwheel repair` then
moves it to `pytest_llmchaostest.scripts/llmchaos` in site-packages (beside the grafted
`pytest_llmchaostest.libs/`, its RPATH pointing there) and leaves in its place a script that execs it:
a binary in bin/ could not find libraries in site-packages (auditwheel issue 340)."""
import os
import sysconfig

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CarryBinary(BuildHookInterface):
    def initialize(self, version, build_data):
        binary = os.environ.get("LLMCHAOS_WHEEL_BINARY")
        if not binary:
            return
        if not os.access(binary, os.X_OK):
            raise RuntimeError(f"LLMCHAOS_WHEEL_BINARY is not an executable file: {binary}")
        build_data["shared_scripts"][binary] = "llmchaos"
        build_data["pure_python"] = False
        # auditwheel then names the oldest manylinux policy it satisfies (scripts/package)
        build_data["tag"] = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
