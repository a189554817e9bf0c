#pragma once
// `llmchaos report scorecard`: several runs' reports (one per target: an SDK client, a framework, a
// gateway) as one matrix, case x target, each cell pass / fail / n/a / unknown with the observed
// actions; the header names each target's label, version and settings. Pure functions of the runs.
#include <string>
#include <vector>

#include "llmchaos/harness/result.hpp"

namespace llmchaos::reports {

struct ScorecardColumn {
  std::string name;            // the run's label, else the report's file name
  const harness::RunResult* run = nullptr;
};

// Markdown, fit for a README or a pull-request comment.
std::string scorecard_markdown(const std::vector<ScorecardColumn>& columns);
// One self-contained HTML page (no external asset).
std::string scorecard_html(const std::vector<ScorecardColumn>& columns);

}  // namespace llmchaos::reports
