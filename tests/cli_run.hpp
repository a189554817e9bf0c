#pragma once
// The CLI end to end from a test: `llmchaos ARGS` as a child process (stdout and stderr together), a
// file it wrote, and a scratch folder removed at the end of the test.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "test_env.hpp"

namespace llmchaos::test {

struct CliOutput {
  int code = -1;     // exit code; -1 when ended by a signal
  std::string text;  // stdout and stderr
  double seconds = 0;
};

inline CliOutput run_cli(const std::string& args) {
  const auto bin = llmchaos_bin();
  REQUIRE_FALSE(bin.empty());
  const auto start = std::chrono::steady_clock::now();
  CliOutput out;
  FILE* p = popen(("'" + bin + "' " + args + " 2>&1").c_str(), "r");
  REQUIRE(p);
  std::array<char, 4096> buf{};
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) out.text.append(buf.data(), n);
  const int status = pclose(p);
  out.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return out;
}

// A whole file (a report the CLI wrote), bytes as they are; "" when it cannot be read.
inline std::string slurp(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fresh folder named by the test's tag and process (and a counter: one test may make several).
struct TempDir {
  std::filesystem::path path;
  explicit TempDir(const std::string& tag) {
    static int made = 0;
    path = std::filesystem::temp_directory_path() /
           ("llmchaos-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(made++));
    std::filesystem::remove_all(path);
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
};

}  // namespace llmchaos::test
