#pragma once
// Report formats: one small writer per file under reports/src/, listed in one table (formats.cpp).
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

#include "llmchaos/results/result.hpp"

namespace llmchaos::reports {

// report.md never exceeds this, whatever the run's size (a pull-request comment: GitHub's limit is 65,536).
inline constexpr std::size_t max_markdown_chars = 60'000;

// What a format may be asked for beyond the run itself.
struct Options {
  bool json_compact = false;  // report.json without indentation, one case per line (--compact-json)
};

struct Format {
  std::string_view name;       // "junit", "json", "markdown", "html"
  std::string_view file_name;  // default file name inside --report-dir ("junit.xml", ...)
  void (*write)(const harness::RunResult& run, const Options& options, std::ostream& out);
};

std::span<const Format> formats();
const Format* find_format(std::string_view name);  // nullptr when unknown
// The report as a string (what write_report puts in the file).
std::string render(const Format& format, const harness::RunResult& run, const Options& options = {});
// Streams the report to a temp file beside `path`, then renames it (atomic: a crash or a writer that
// throws never leaves half a report); creates the parent directories. Throws std::runtime_error naming
// the path.
void write_report(const Format& format, const harness::RunResult& run, const std::string& path,
                  const Options& options = {});

}  // namespace llmchaos::reports
