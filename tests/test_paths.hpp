#pragma once
// Where the llmchaos CLI and the source tree are, for tests that drive the real binary:
// $LLMCHAOS_BIN / $LLMCHAOS_SOURCE_DIR when set, else the paths CMake baked in.
#include <cstdlib>
#include <string>

namespace llmchaos::test_paths {

inline std::string llmchaos_bin() {
  if (const char* v = std::getenv("LLMCHAOS_BIN"); v && *v) return v;
#ifdef LLMCHAOS_TEST_BIN
  return LLMCHAOS_TEST_BIN;
#else
  return "llmchaos";
#endif
}

inline std::string source_dir() {
  if (const char* v = std::getenv("LLMCHAOS_SOURCE_DIR"); v && *v) return v;
#ifdef LLMCHAOS_TEST_SOURCE_DIR
  return LLMCHAOS_TEST_SOURCE_DIR;
#else
  return ".";
#endif
}

}  // namespace llmchaos::test_paths
