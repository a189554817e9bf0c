#pragma once
// `llmchaos report scorecard`: several runs' reports (one per target: an SDK client, a framework, a
// gateway) as one matrix, case x target, each cell pass / fail / n/a / unknown with the observed
// actions; the header names each target's label, version and settings. Pure functions of the runs.
#include <string>
#include <vector>

#include "llmchaos/results/result.hpp"

namespace llmchaos::reports {

struct ScorecardColumn {
  std::string name;  // the run's label, else the report's file name
  const harness::RunResult* run = nullptr;
};

// Markdown, fit for a README or a pull-request comment.
std::string scorecard_markdown(const std::vector<ScorecardColumn>& columns);
// One self-contained HTML page (no external asset).
std::string scorecard_html(const std::vector<ScorecardColumn>& columns);

// `scorecard --changes OLD NEW`: the cases (by name) whose observed actions, outcome or verdict differ
// between two runs of the same suite (an SDK's previous and newest version), and the cases only one of
// them ran. `before` / `after` is nullptr for a case the other run did not have.
struct CaseChange {
  std::string name;
  const harness::CaseResult* before = nullptr;
  const harness::CaseResult* after = nullptr;
};
struct ScorecardChanges {
  std::size_t compared = 0;         // cases both runs have
  std::vector<CaseChange> changed;  // in the order the old run lists them, then the new run's own
};
ScorecardChanges scorecard_changes(const harness::RunResult& before, const harness::RunResult& after);
// Markdown: the changed cases side by side, then each one's two timelines; "none changed out of N".
std::string changes_markdown(const ScorecardColumn& before, const ScorecardColumn& after);
// The same as one self-contained HTML page.
std::string changes_html(const ScorecardColumn& before, const ScorecardColumn& after);

}  // namespace llmchaos::reports
