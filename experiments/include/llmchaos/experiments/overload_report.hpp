#pragma once
// Renderings of an overload study: text table, JSON, Markdown (one table of writers).
// Every row shows coverage next to the achieved load, and rows whose achieved load is under 95% of the
// offered load are flagged: their coverage is biased upward (survivorship).
#include <iosfwd>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/experiments/overload.hpp"

namespace llmchaos::experiments {

struct OverloadReport {
  std::string mode = "virtual";  // "virtual" or "live"
  OverloadSettings settings;
  std::vector<OverloadRow> rows;
  // Live only: the simulation of the same settings and arrivals, and what disagreed beyond the tolerance.
  std::vector<OverloadRow> simulated;
  std::string tolerance;
  std::vector<std::string> disagreements;
};

struct OverloadFormat {
  std::string_view name;  // "text", "json", "markdown"
  void (*write)(const OverloadReport& report, std::ostream& out);
};
std::span<const OverloadFormat> overload_formats();
const OverloadFormat* find_overload_format(std::string_view name);

}  // namespace llmchaos::experiments
