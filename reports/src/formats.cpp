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

#include "llmchaos/core/atomic_file.hpp"
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
  try {
    // Streamed: the report never sits whole in memory. A writer that throws leaves no file behind.
    write_file_atomic(path, [&](std::ostream& out) {
      try {
        format.write(run, options, out);
      } catch (const std::exception& e) {
        throw std::runtime_error(std::string(format.name) + " writer: " + e.what());
      }
    });
  } catch (const std::runtime_error& e) {  // "PATH: WHAT"
    throw std::runtime_error(std::string("cannot write report ") + e.what());
  }
}

}  // namespace llmchaos::reports
