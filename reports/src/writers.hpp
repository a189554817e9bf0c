#pragma once
// One writer per format, each in its own file; formats.cpp lists them in the one table.
#include <iosfwd>

#include "llmchaos/reports/reports.hpp"

namespace llmchaos::reports::detail {

void write_junit(const harness::RunResult& run, const Options& options, std::ostream& out);  // junit.cpp
void write_json(const harness::RunResult& run, const Options& options, std::ostream& out);   // json.cpp
void write_markdown(const harness::RunResult& run, const Options& options,
                    std::ostream& out);                                                     // markdown.cpp
void write_html(const harness::RunResult& run, const Options& options, std::ostream& out);  // html.cpp

}  // namespace llmchaos::reports::detail
