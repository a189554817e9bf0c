#pragma once
// Small helpers shared by the report tests: a scratch directory, file reading, substring counting.
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>

#include "test_env.hpp"

namespace test_helpers {

// A fresh directory under the system temp dir, removed when the test ends.
class ScratchDir {
 public:
  explicit ScratchDir(std::string_view tag) {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() / ("llmchaos-reports-" + std::to_string(::getpid()) + "-" +
                                                      std::string(tag) + "-" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::size_t count(std::string_view text, std::string_view needle) {
  std::size_t n = 0;
  for (auto pos = text.find(needle); pos != std::string_view::npos;
       pos = text.find(needle, pos + needle.size()))
    ++n;
  return n;
}

// The checked-in sources (tests/test_env.hpp).
inline std::filesystem::path source_dir() {
  return llmchaos::test::source_dir();
}

}  // namespace test_helpers
