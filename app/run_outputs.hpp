#pragma once
// What `run` and `report merge` share after the cases: the baseline gate, the summary, the reports and
// the baseline file, with the same flags (--report-dir, --FORMAT FILE, --compact-json, --baseline,
// --accept-changes, --write-baseline) and the same exit codes.
#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <string_view>

#include "llmchaos/harness/baseline.hpp"
#include "llmchaos/results/result.hpp"

namespace llmchaos::app {

struct RunOutputs {
  std::map<std::string, std::string> report_paths;  // format name -> file
  std::string report_dir;
  bool json_compact = false;
  std::string baseline;
  std::string write_baseline;
  bool accept_changes = false;

  void add_options(CLI::App* sub);
  // Reads --baseline before anything runs; false (the error printed) when it cannot be read.
  bool load_baseline();
  // Gates on the baseline, prints the summary and the gate (then `extra`), writes the reports and the
  // baseline file. Exit code: 2 on a write error, 1 when a case failed or is unknown, the gate failed or
  // `extra_failed`, else 0.
  int finish(harness::RunResult& run, std::string_view command, const std::string& extra = {},
             bool extra_failed = false) const;

 private:
  harness::Baseline loaded_;
};

}  // namespace llmchaos::app
