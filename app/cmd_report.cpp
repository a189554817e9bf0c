// llmchaos report: work on reports already written (merge the shards' JSON reports, ...). Each
// sub-command is one cmd_report_*.cpp listed in the table below.
#include "commands.hpp"
#include "report_commands.hpp"

namespace llmchaos::app {
namespace {

constexpr AddReportCommand report_commands[] = {
    add_report_merge,
    add_report_scorecard,
};

}  // namespace

void add_report(CLI::App& app, int& exit_code) {
  auto* sub = app.add_subcommand("report", "work on written reports: merge the shards' report.json, ...");
  sub->require_subcommand(1);
  for (auto add : report_commands) add(*sub, exit_code);
}

}  // namespace llmchaos::app
