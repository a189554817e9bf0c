#pragma once
// Where the llmchaos CLI and the source tree are (tests/test_paths.hpp), in the tests' namespace.
#include "test_paths.hpp"

namespace llmchaos::test {
using llmchaos::test_paths::llmchaos_bin;
using llmchaos::test_paths::slowdown;
using llmchaos::test_paths::source_dir;
}  // namespace llmchaos::test
