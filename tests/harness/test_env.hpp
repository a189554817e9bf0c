#pragma once
// Where the CLI binary and the source tree are: from CTest's environment (LLMCHAOS_BIN,
// LLMCHAOS_SOURCE_DIR), else derived (the binary beside this test executable's folder, the source
// tree = the working directory CTest runs tests in).
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace llmchaos::harness::test {

inline std::string llmchaos_bin() {
  if (const char* v = std::getenv("LLMCHAOS_BIN"); v && *v) return v;
  std::error_code ec;
  const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string() : (exe.parent_path().parent_path() / "app" / "llmchaos").string();
}

inline std::string source_dir() {
  if (const char* v = std::getenv("LLMCHAOS_SOURCE_DIR"); v && *v) return v;
  return std::filesystem::current_path().string();
}

}  // namespace llmchaos::harness::test
