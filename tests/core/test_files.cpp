// The shared file and text pieces: atomic writes, whole-file reads, the TOML string escaper.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "llmchaos/core/atomic_file.hpp"
#include "llmchaos/core/file_text.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/core/toml_reader.hpp"
#include "llmchaos/core/toml_text.hpp"

using namespace llmchaos;
namespace fs = std::filesystem;

namespace {
struct TempDir {
  fs::path path;
  TempDir() : path(fs::temp_directory_path() / ("llmchaos-files-" + std::to_string(::getpid()))) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};
std::size_t entries(const fs::path& dir) {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir)) ++n;
  return n;
}
}  // namespace

TEST_CASE("an atomic write creates the folders and replaces the file whole, leaving no temporary file",
          "[core][files]") {
  TempDir dir;
  const auto target = (dir.path / "sub" / "out.txt").string();
  write_file_atomic(target, "first");
  write_file_atomic(target, std::string_view("second"));
  CHECK(read_file_text(target) == "second");
  CHECK(entries(dir.path / "sub") == 1);
  CHECK((fs::status(target).permissions() & fs::perms::others_read) != fs::perms::none);
}

TEST_CASE("an atomic write whose writer throws keeps the old file and names the path", "[core][files]") {
  TempDir dir;
  const auto target = (dir.path / "out.txt").string();
  write_file_atomic(target, "kept");
  CHECK_THROWS_WITH(write_file_atomic(target,
                                      [](std::ostream& out) {
                                        out << "half";
                                        throw std::runtime_error("writer broke");
                                      }),
                    target + ": writer broke");
  CHECK(read_file_text(target) == "kept");
  CHECK(entries(dir.path) == 1);
}

TEST_CASE("a whole-file read names what the file is in its error", "[core][files]") {
  CHECK_THROWS_WITH(read_file_text("/nonexistent/x.jsonl", "the trace file"),
                    "/nonexistent/x.jsonl: cannot open the trace file: No such file or directory");
  CHECK_THROWS_WITH(read_file_text("/nonexistent/x.toml"),
                    "/nonexistent/x.toml: cannot open: No such file or directory");
}

TEST_CASE("a TOML basic string escapes quotes, backslashes and control characters and reads back the same",
          "[core][toml]") {
  const std::string text = "say \"hi\"\\ \n\tbell\x07 end";
  CHECK(toml_string("plain") == "\"plain\"");
  CHECK(toml_escaped("a\"b\\c\nd\te\x01") == "a\\\"b\\\\c\\nd\\te\\u0001");
  const auto doc = parse_toml("v = " + toml_string(text) + "\n", "mem.toml");
  CHECK(doc["v"].value<std::string>() == text);
}
