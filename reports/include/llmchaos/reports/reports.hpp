#pragma once
// Report formats: one small writer per file under reports/src/, listed in one table (formats.cpp).
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>

#include "llmchaos/harness/result.hpp"

namespace llmchaos::reports {

struct Format {
  std::string_view name;       // "junit", "json", "markdown", "html"
  std::string_view file_name;  // default file name inside --report-dir ("junit.xml", ...)
  void (*write)(const harness::RunResult& run, std::ostream& out);
};

std::span<const Format> formats();
const Format* find_format(std::string_view name);  // nullptr when unknown
// The report as a string (what write_report puts in the file).
std::string render(const Format& format, const harness::RunResult& run);
// Writes atomically (temp file + rename) so a crash never leaves half a report; creates the parent
// directories. Throws std::runtime_error naming the path.
void write_report(const Format& format, const harness::RunResult& run, const std::string& path);

}  // namespace llmchaos::reports
