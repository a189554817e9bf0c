#pragma once
// The CI gate on policy changes: a baseline records each case's observed actions; a later run is
// compared case by case and every change (old -> new) is named.
#include <map>
#include <string>
#include <vector>

#include "llmchaos/results/result.hpp"

namespace llmchaos::harness {

struct BaselineCase {
  Action action = Action::none;  // at the first failure point
  std::vector<Action> actions;   // at every failure point, in order
};
using Baseline = std::map<std::string, BaselineCase>;  // by case name

Baseline baseline_of(const RunResult& run);
std::string baseline_to_json(const RunResult& run);  // {"version": 1, "seed": S, "cases": {name: {...}}}
Baseline baseline_from_json(std::string_view json, const std::string& source_name);  // throws SpecError
Baseline read_baseline(const std::string& path);  // throws SpecError naming the file
void write_baseline(const RunResult& run,
                    const std::string& path);  // throws std::runtime_error naming the path

// Cases present in both whose actions differ, in run order. Cases only in one of them are not changes
// (a filtered run or a new case); `added` / `removed` list them by name when given.
std::vector<BaselineChange> compare_baseline(const Baseline& before, const RunResult& run,
                                             std::vector<std::string>* added = nullptr,
                                             std::vector<std::string>* removed = nullptr);
std::string actions_str(const std::vector<Action>& actions);

// The gate of `run`, `report merge` and CI: compares `run` with `before` (read from `path`), records
// the changes in the run (its reports show them) and says what changed, case by case. `failed`: some
// case changed action and the changes were not accepted.
struct GateResult {
  std::string text;
  bool failed = false;
};
GateResult gate_on_baseline(const Baseline& before, const std::string& path, bool accept_changes,
                            RunResult& run);  // "retry,queue" ("none" when empty)

}  // namespace llmchaos::harness
