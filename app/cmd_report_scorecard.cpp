// llmchaos report scorecard A.json B.json ...: several runs' JSON reports (one per target) as one
// matrix, case x target (reports/scorecard.hpp), in Markdown (stdout, or --markdown FILE) and a
// self-contained HTML page (--html FILE). With --changes OLD.json NEW.json: only the cases whose
// observed actions or verdict differ between the two runs, with both timelines, in the same outputs.
// Exit 0 written, 2 usage or a file error.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "llmchaos/reports/json.hpp"
#include "llmchaos/reports/scorecard.hpp"
#include "report_commands.hpp"

namespace llmchaos::app {
namespace {

struct ScorecardArgs {
  std::vector<std::string> inputs;
  std::string markdown;
  std::string html;
  bool changes = false;
};

bool write_file(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) std::cerr << "llmchaos report scorecard: cannot write " << path << "\n";
  return static_cast<bool>(out);
}

int scorecard_command(const ScorecardArgs& a) {
  std::vector<harness::RunResult> runs;
  runs.reserve(a.inputs.size());
  for (const auto& path : a.inputs) {
    try {
      runs.push_back(reports::read_json_report(path));
    } catch (const std::exception& e) {
      std::cerr << e.what() << "\n";
      return 2;
    }
  }
  std::vector<reports::ScorecardColumn> columns;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    auto name = runs[i].label;
    if (name.empty()) name = std::filesystem::path(a.inputs[i]).parent_path().filename().string();
    if (name.empty()) name = a.inputs[i];
    columns.push_back({name, &runs[i]});
  }
  if (a.changes && columns.size() != 2) {
    std::cerr << "llmchaos report scorecard: --changes compares two reports, OLD.json NEW.json (got "
              << columns.size() << ")\n";
    return 2;
  }
  const auto md =
      a.changes ? reports::changes_markdown(columns[0], columns[1]) : reports::scorecard_markdown(columns);
  bool ok = true;
  if (a.markdown.empty())
    std::cout << md;
  else
    ok = write_file(a.markdown, md) && ok;
  if (!a.html.empty())
    ok = write_file(a.html, a.changes ? reports::changes_html(columns[0], columns[1])
                                      : reports::scorecard_html(columns)) &&
         ok;
  return ok ? 0 : 2;
}

}  // namespace

void add_report_scorecard(CLI::App& report, int& exit_code) {
  auto a = std::make_shared<ScorecardArgs>();
  auto* sub = report.add_subcommand(
      "scorecard",
      "several targets' report.json (one run each) as one case x target matrix, Markdown and HTML");
  sub->add_option("reports", a->inputs, "the runs' JSON reports, one per target (columns in this order)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_flag(
      "--changes", a->changes,
      "compare two runs of one suite (OLD.json NEW.json: an SDK's previous and newest version): list every "
      "case whose observed actions, outcome or verdict differ, with both timelines; \"none changed out of "
      "N\" "
      "when none did");
  sub->add_option("--markdown", a->markdown, "write the Markdown scorecard to this file (default: stdout)");
  sub->add_option("--html", a->html, "write the self-contained HTML scorecard to this file");
  sub->callback([a, &exit_code] { exit_code = scorecard_command(*a); });
}

}  // namespace llmchaos::app
