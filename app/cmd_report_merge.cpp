// llmchaos report merge A.json B.json ...: the shards' JSON reports (`run --shard K/N --json`) as one
// run: the four reports as if one run had written them, and the baseline gate on the whole. Exit 0 all
// passed, 1 any failed / unknown / changed, 2 usage, a file, or shards that do not belong together.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "llmchaos/harness/shard.hpp"
#include "llmchaos/reports/json.hpp"
#include "report_commands.hpp"
#include "run_outputs.hpp"

namespace llmchaos::app {
namespace {

struct MergeArgs {
  std::vector<std::string> inputs;
  RunOutputs outputs;
};

int merge_command(MergeArgs& a) {
  std::vector<harness::RunResult> shards;
  shards.reserve(a.inputs.size());
  for (const auto& path : a.inputs) {
    try {
      shards.push_back(reports::read_json_report(path));
    } catch (const std::exception& e) {
      std::cerr << e.what() << "\n";
      return 2;
    }
  }
  if (!a.outputs.load_baseline()) return 2;
  auto merged = harness::merge_shards(std::move(shards), a.inputs);
  if (!merged.errors.empty()) {
    for (const auto& e : merged.errors) std::cerr << "llmchaos report merge: " << e << "\n";
    return 2;
  }
  std::cout << fmt::format("merged {} shard report(s): {} case(s)\n", merged.run.merged_shards,
                           merged.run.cases.size());
  return a.outputs.finish(merged.run, "report merge");
}

}  // namespace

void add_report_merge(CLI::App& report, int& exit_code) {
  auto a = std::make_shared<MergeArgs>();
  auto* sub = report.add_subcommand(
      "merge", "merge the shards' report.json (run --shard K/N) into the reports one run would have written");
  sub->add_option("reports", a->inputs, "the shards' JSON reports, one per shard")
      ->required()
      ->check(CLI::ExistingFile);
  a->outputs.add_options(sub);
  sub->callback([a, &exit_code] { exit_code = merge_command(*a); });
}

}  // namespace llmchaos::app
