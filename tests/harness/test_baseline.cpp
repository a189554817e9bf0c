// The CI gate's baseline: what it records, how it reads back, and which cases count as changed.
#include <catch2/catch.hpp>

#include "llmchaos/harness/baseline.hpp"

using namespace llmchaos;
using namespace llmchaos::harness;

namespace {
CaseResult case_with(const std::string& name, std::vector<Action> actions) {
  CaseResult c;
  c.name = name;
  c.observed_actions = actions;
  c.observed = actions.empty() ? Action::none : actions.front();
  c.verdict = Verdict::pass;
  return c;
}
}  // namespace

TEST_CASE("a baseline round-trips every case's actions", "[baseline]") {
  RunResult run;
  run.seed = 7;
  run.cases = {case_with("a", {Action::retry, Action::queue}), case_with("b", {})};
  auto b = baseline_from_json(baseline_to_json(run), "b.json");
  REQUIRE(b.size() == 2);
  CHECK(b.at("a").action == Action::retry);
  CHECK(b.at("a").actions == std::vector<Action>{Action::retry, Action::queue});
  CHECK(b.at("b").action == Action::none);
  CHECK(b.at("b").actions.empty());
}

TEST_CASE("the gate names every case whose actions changed, and only those", "[baseline]") {
  RunResult before;
  before.cases = {case_with("same", {Action::fail_closed}), case_with("flipped", {Action::retry}),
                  case_with("later point", {Action::retry, Action::retry}),
                  case_with("gone", {Action::queue})};
  RunResult after;
  after.cases = {case_with("same", {Action::fail_closed}), case_with("flipped", {Action::queue}),
                 case_with("later point", {Action::retry, Action::queue}), case_with("new", {Action::none})};
  std::vector<std::string> added, removed;
  auto changes = compare_baseline(baseline_of(before), after, &added, &removed);
  REQUIRE(changes.size() == 2);
  CHECK(changes[0].case_name == "flipped");
  CHECK(changes[0].before == Action::retry);
  CHECK(changes[0].after == Action::queue);
  CHECK(changes[1].case_name == "later point");
  CHECK(actions_str(changes[1].before_all) == "retry,retry");
  CHECK(actions_str(changes[1].after_all) == "retry,queue");
  CHECK(added == std::vector<std::string>{"new"});
  CHECK(removed == std::vector<std::string>{"gone"});
}

TEST_CASE("a file that is not a baseline is refused with its name", "[baseline]") {
  CHECK_THROWS_WITH(baseline_from_json("[1, 2]", "x.json"), "x.json: not a baseline: no \"cases\" object");
  CHECK_THROWS_WITH(baseline_from_json(R"({"cases": {"a": {"action": "retyr"}}})", "x.json"),
                    "x.json: case \"a\": \"retyr\" is not an action");
  CHECK_THROWS_WITH(read_baseline("/nonexistent/baseline.json"),
                    "/nonexistent/baseline.json: cannot open: No such file or directory");
}
