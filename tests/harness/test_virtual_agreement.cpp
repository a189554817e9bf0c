// The bundled catalog run live (real sockets, a small time scale) and under virtual time: every case must
// give the same verdict, the same action at every failure point and the same outcome. Virtual time is also
// deterministic: two virtual runs give identical ledgers.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <map>

#include "llmchaos/core/ledger.hpp"
#include "llmchaos/harness/baseline.hpp"
#include "llmchaos/harness/runner.hpp"
#include "test_env.hpp"

using namespace llmchaos;
using namespace llmchaos::harness;

namespace {

std::vector<Case> catalog() {
  auto suite = load_suite({test::source_dir() + "/cases"}, {});
  REQUIRE(suite.errors.empty());
  REQUIRE(suite.cases.size() > 50);
  return suite.cases;
}

RunResult run(const std::vector<Case>& cases, bool virtual_time, double scale) {
  RunOptions o;
  o.virtual_time = virtual_time;
  o.time_scale = scale;
  o.jobs = 2;
  return run_suite(cases, o).result;
}

std::string outcome_str(const CaseResult& c) {
  return c.observed_outcome ? std::string(to_string(*c.observed_outcome)) : std::string("-");
}

}  // namespace

TEST_CASE("virtual time: every catalog case gives the same verdict, actions and outcome as the live run",
          "[virtual][catalog]") {
  auto cases = catalog();
  take_exact_time_cases(cases);  // on an exact time boundary: a live clock cannot hit it
  const auto live = run(cases, false, 0.1);
  const auto virt = run(cases, true, 0.1);
  REQUIRE(live.cases.size() == virt.cases.size());
  std::vector<std::string> differ;
  for (std::size_t i = 0; i < live.cases.size(); ++i) {
    const auto& l = live.cases[i];
    const auto& v = virt.cases[i];
    REQUIRE(l.name == v.name);
    if (l.verdict != v.verdict || l.observed_actions != v.observed_actions ||
        outcome_str(l) != outcome_str(v))
      differ.push_back(fmt::format("{}: live {} [{}] {}, virtual {} [{}] {}", l.name, to_string(l.verdict),
                                   actions_str(l.observed_actions), outcome_str(l), to_string(v.verdict),
                                   actions_str(v.observed_actions), outcome_str(v)));
  }
  INFO(fmt::format("{}", fmt::join(differ, "\n")));
  CHECK(differ.empty());
}

TEST_CASE("virtual time: the catalog's verdicts do not depend on the time scale, and a rerun is identical",
          "[virtual][catalog]") {
  const auto cases = catalog();
  const auto at_scale = run(cases, true, 1);
  const auto again = run(cases, true, 1);
  const auto scaled = run(cases, true, 0.1);
  CHECK(at_scale.unknown() == 0);
  for (std::size_t i = 0; i < at_scale.cases.size(); ++i) {
    const auto& a = at_scale.cases[i];
    CAPTURE(a.name);
    CHECK(ledger_to_json(a.ledger) == ledger_to_json(again.cases[i].ledger));
    CHECK(a.verdict == scaled.cases[i].verdict);
    CHECK(a.observed_actions == scaled.cases[i].observed_actions);
  }
}
