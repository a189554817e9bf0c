#include "run_outputs.hpp"

#include <fmt/format.h>

#include <iostream>

#include "llmchaos/harness/runner.hpp"
#include "llmchaos/reports/reports.hpp"

namespace llmchaos::app {

void RunOutputs::add_options(CLI::App* sub) {
  for (const auto& f : reports::formats()) {
    const std::string name(f.name);
    sub->add_option("--" + name, report_paths[name], fmt::format("write the {} report to this file", name));
  }
  sub->add_option("--report-dir", report_dir,
                  "write every report into this folder (junit.xml, report.json, ...)");
  sub->add_flag("--compact-json", json_compact,
                "report.json without indentation, one case per line (smaller)");
  sub->add_option("--baseline", baseline,
                  "compare each case's action with this baseline; a change fails the run");
  sub->add_option("--write-baseline", write_baseline, "record each case's observed action in this file");
  sub->add_flag("--accept-changes", accept_changes,
                "with --baseline: print the changes but do not fail on them");
}

bool RunOutputs::load_baseline() {
  if (baseline.empty()) return true;
  try {
    loaded_ = harness::read_baseline(baseline);
    return true;
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return false;
  }
}

int RunOutputs::finish(harness::RunResult& run, std::string_view command, const std::string& extra,
                       bool extra_failed) const {
  harness::GateResult gate;
  if (!baseline.empty()) gate = harness::gate_on_baseline(loaded_, baseline, accept_changes, run);
  std::cout << harness::summary_table(run) << gate.text << extra;

  int code = (run.failed() + run.unknown() > 0 || gate.failed || extra_failed) ? 1 : 0;
  // Reports: --report-dir writes all four; a per-format flag picks that format's path.
  std::map<std::string, std::string> targets;
  if (!report_dir.empty())
    for (const auto& f : reports::formats())
      targets[std::string(f.name)] = report_dir + "/" + std::string(f.file_name);
  for (const auto& [name, path] : report_paths)
    if (!path.empty()) targets[name] = path;
  const reports::Options options{.json_compact = json_compact};
  if (targets.empty())
    std::cout
        << "no report written (--report-dir DIR writes junit.xml, report.json, report.md and report.html; "
           "--junit/--json/--markdown/--html FILE one of them)\n";
  for (const auto& [name, path] : targets) {
    try {
      reports::write_report(*reports::find_format(name), run, path, options);
      std::cout << fmt::format("{} report: {}\n", name, path);
    } catch (const std::exception& e) {
      std::cerr << "llmchaos " << command << ": " << e.what() << "\n";
      code = 2;
    }
  }
  if (!write_baseline.empty()) {
    try {
      harness::write_baseline(run, write_baseline);
      std::cout << fmt::format("baseline written: {}\n", write_baseline);
    } catch (const std::exception& e) {
      std::cerr << "llmchaos " << command << ": " << e.what() << "\n";
      code = 2;
    }
  }
  return code;
}

}  // namespace llmchaos::app
