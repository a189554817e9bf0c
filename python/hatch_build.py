"""A platform wheel when LLMCHAOS_WHEEL_BINARY names the llmchaos binary to carry (scripts/package);
a pure-Python wheel (binary from LLMCHAOS_BIN or PATH) otherwise."""
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
        build_data["force_include"][binary] = "llmchaostest/bin/llmchaos"
        build_data["pure_python"] = False
        # auditwheel then names the oldest manylinux policy it satisfies (scripts/package)
        build_data["tag"] = "py3-none-" + sysconfig.get_platform().replace("-", "_").replace(".", "_")
