#pragma once
// Where the llmchaos CLI and the source tree are (tests/test_paths.hpp), in the harness tests' namespace.
#include "../test_paths.hpp"

namespace llmchaos::harness::test {
using llmchaos::test_paths::llmchaos_bin;
using llmchaos::test_paths::slowdown;
using llmchaos::test_paths::source_dir;
}  // namespace llmchaos::harness::test
