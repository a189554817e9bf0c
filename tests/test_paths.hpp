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

// How much slower than a Release build the binaries run (LLMCHAOS_TEST_SLOWDOWN, 1 to 20, default 1):
// scripts/test-sanitizers sets it. Tests that play real time at a small time scale multiply the scale
// (and their time bounds) by it, so a case's margins stay wider than the sanitizer's slowdown.
inline double slowdown() {
  const char* v = std::getenv("LLMCHAOS_TEST_SLOWDOWN");
  const double f = v ? std::atof(v) : 1.0;
  return f < 1 ? 1.0 : f > 20 ? 20.0 : f;
}

}  // namespace llmchaos::test_paths
