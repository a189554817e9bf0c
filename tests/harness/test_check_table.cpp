// The checker's one table (harness/src/checks.cpp): every check listed once, in report order, and each
// result named as its table line names it (an unknown verdict names the check by its line).
#include <algorithm>
#include <catch2/catch.hpp>
#include <set>

#include "builders.hpp"

using namespace llmchaos;
using namespace llmchaos::harness;
using namespace llmchaos::harness::test;

TEST_CASE("the check table lists every check once, in report order", "[checker]") {
  const std::vector<std::string_view> report_order = {"action",
                                                      "expect_at",
                                                      "action_agreement",
                                                      "expect_outcome",
                                                      "expect_attempts",
                                                      "expect_share",
                                                      "max_total_attempts",
                                                      "max_elapsed_ms",
                                                      "max_extra_cost_usd",
                                                      "no_duplicate_commit",
                                                      "timeline",
                                                      "no_hang",
                                                      "no_truncated_success",
                                                      "retry_after_honoured",
                                                      "backoff_bounds",
                                                      "no_hammering",
                                                      "max_wall_ms",
                                                      "alive_after",
                                                      "names_serving_route",
                                                      "served_during_outage",
                                                      "recovered_within",
                                                      "max_outage_attempts",
                                                      "expect_rate_limited",
                                                      "within_tier_limits",
                                                      "cooldown_by_owner",
                                                      "cooldown_extends",
                                                      "caller_timeout_no_cooldown",
                                                      "fallback_without_waiting",
                                                      "retry_after_forwarded"};
  const auto names = check_names();
  CHECK(names == report_order);
  CHECK(std::set<std::string_view>(names.begin(), names.end()).size() == names.size());
}

TEST_CASE("a case's checks carry their table names, in table order", "[checker]") {
  auto c = make_case(Action::retry);
  c.checks.no_hang_ms = 10'000;
  c.checks.max_wall_ms = 10'000;
  auto h = history({entry(1, "primary", 0, FaultKind::rate_429, 429),
                    entry(2, "primary", 1, FaultKind::ok, 200, 300, 310)},
                   log({attempt(0, "primary", Owner::rate), attempt(1, "primary")},
                       {point(0, "primary", Action::retry)}, Outcome::retry_recovery));
  const auto r = check_case(c, h, {});
  const auto names = check_names();
  REQUIRE(r.checks.size() >= 5);
  std::size_t at = 0;  // each result's table line comes after the previous one's
  for (const auto& check : r.checks) {
    const auto it = std::find(names.begin() + at, names.end(), check.name);
    INFO(check.name);
    REQUIRE(it != names.end());
    at = static_cast<std::size_t>(it - names.begin()) + 1;
  }
  CHECK(find_check(r, "no_hang"));
  CHECK(find_check(r, "max_wall_ms"));
}
