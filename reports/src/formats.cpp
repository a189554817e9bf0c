// The one table of report formats, and the atomic file writer they share.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <system_error>

#include "llmchaos/reports/reports.hpp"
#include "writers.hpp"

namespace llmchaos::reports {
namespace {

constexpr Format format_table[] = {
    {"junit", "junit.xml", detail::write_junit},
    {"json", "report.json", detail::write_json},
    {"markdown", "report.md", detail::write_markdown},
    {"html", "report.html", detail::write_html},
};

[[noreturn]] void fail(const std::string& path, const std::string& what) {
  throw std::runtime_error("cannot write report " + path + ": " + what);
}

}  // namespace

std::span<const Format> formats() {
  return format_table;
}

const Format* find_format(std::string_view name) {
  for (const auto& f : format_table)
    if (f.name == name) return &f;
  return nullptr;
}

std::string render(const Format& format, const harness::RunResult& run, const Options& options) {
  std::ostringstream out;
  format.write(run, options, out);
  return std::move(out).str();
}

void write_report(const Format& format, const harness::RunResult& run, const std::string& path,
                  const Options& options) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) fail(path, "creating " + target.parent_path().string() + ": " + ec.message());
  }
  // The temp file sits beside the target so the rename stays on one file system (atomic).
  std::string temp = (target.has_parent_path() ? target.parent_path() / "" : fs::path()).string() + "." +
                     target.filename().string() + ".XXXXXX";
  const int fd = ::mkstemp(temp.data());
  if (fd < 0) fail(path, "creating a temporary file " + temp + ": " + std::strerror(errno));
  ::fchmod(fd, 0644);  // mkstemp makes 0600; a report is for everyone who reads the build
  ::close(fd);
  const auto discard = [&] {
    std::error_code ignored;
    fs::remove(temp, ignored);
  };
  {
    // Streamed: the report never sits whole in memory. A writer that throws leaves no file behind.
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    try {
      format.write(run, options, out);
    } catch (const std::exception& e) {
      out.close();
      discard();
      fail(path, std::string(format.name) + " writer: " + e.what());
    }
    out.flush();
    if (!out) {
      discard();
      fail(path, "writing " + temp + " failed");
    }
  }
  fs::rename(temp, target, ec);
  if (ec) {
    discard();
    fail(path, "renaming " + temp + ": " + ec.message());
  }
}

}  // namespace llmchaos::reports
