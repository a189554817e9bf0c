// cooldown_by_owner on literal ledgers: both sides of each bound.
#include <catch2/catch.hpp>

#include "builders.hpp"

using namespace llmchaos;
using namespace llmchaos::harness;
using namespace llmchaos::harness::test;

namespace {

// primary answers 429 (script: `hint` ms, or none: the fault's default), then is tried again at `again_at`;
// `backup_at` (when >= 0) is an attempt served by the fallback in between.
History rate_history(double again_at, double backup_at = -1) {
  std::vector<LedgerEntry> ledger{entry(1, "primary", 0, FaultKind::rate_429, 429, 0, 10)};
  if (backup_at >= 0) ledger.push_back(entry(2, "backup", 0, FaultKind::ok, 200, backup_at, backup_at + 5));
  ledger.push_back(entry(3, "primary", 1, FaultKind::ok, 200, again_at, again_at + 5));
  return history(ledger, log({attempt(0, "primary", Owner::rate), attempt(1, "primary")},
                             {point(0, "primary", Action::retry)}, Outcome::retry_recovery));
}

Case cooldown_case(std::optional<double> hint, FaultKind fault = FaultKind::rate_429) {
  auto c = make_case(Action::retry);
  c.checks.cooldown = Cooldown{};
  c.checks.cooldown->quota_window_ms = 60'000;
  mock::Step s;
  s.fault = fault;
  s.retry_after_ms = hint;
  c.script.routes["primary"].steps = {s};
  return c;
}

}  // namespace

TEST_CASE("cooldown_by_owner: a rate 429 cools the route for its Retry-After, and no longer", "[checker][cooldown]") {
  const auto c = cooldown_case(2000);
  CheckOptions opt;
  opt.exact_time = true;
  CHECK(find_check(check_case(c, rate_history(2010), opt), "cooldown_by_owner")->ok);
  const auto early = check_case(c, rate_history(1000), opt);
  CHECK_FALSE(find_check(early, "cooldown_by_owner")->ok);
  CHECK_THAT(find_check(early, "cooldown_by_owner")->message, Catch::Contains("inside the rate cooldown ending at 2010 ms"));
  // The fallback served at 5000 ms while primary had been free since 2010 ms: kept cool too long.
  const auto late = check_case(c, rate_history(6000, 5000), opt);
  CHECK_FALSE(find_check(late, "cooldown_by_owner")->ok);
  CHECK_THAT(find_check(late, "cooldown_by_owner")->message, Catch::Contains("cooldown ended at 2010 ms"));
}

TEST_CASE("cooldown_by_owner: with no retry_after_ms the hint is the fault's default", "[checker][cooldown]") {
  const auto c = cooldown_case(std::nullopt);  // rate_429 sends 1000 ms
  CheckOptions opt;
  opt.exact_time = true;
  CHECK(find_check(check_case(c, rate_history(1010), opt), "cooldown_by_owner")->ok);
  CHECK_FALSE(find_check(check_case(c, rate_history(500), opt), "cooldown_by_owner")->ok);
}

TEST_CASE("cooldown_by_owner: a quota 429 keeps the route out for the quota window", "[checker][cooldown]") {
  const auto c = cooldown_case(std::nullopt, FaultKind::quota_429);
  std::vector<LedgerEntry> ledger{entry(1, "primary", 0, FaultKind::quota_429, 429, 0, 10),
                                  entry(2, "backup", 0, FaultKind::ok, 200, 20, 30)};
  const auto lg = log({attempt(0, "primary", Owner::quota), attempt(0, "backup")}, {point(0, "primary", Action::fallback)},
                      Outcome::fallback_recovery);
  CHECK(find_check(check_case(c, history(ledger, lg), {}), "cooldown_by_owner")->ok);
  ledger.push_back(entry(3, "primary", 1, FaultKind::ok, 200, 5000, 5010));
  const auto r = check_case(c, history(ledger, lg), {});
  CHECK_FALSE(find_check(r, "cooldown_by_owner")->ok);
  CHECK_THAT(find_check(r, "cooldown_by_owner")->message, Catch::Contains("inside the quota window"));
}

TEST_CASE("cooldown_by_owner applies only when the case asks for it", "[checker][cooldown]") {
  auto c = cooldown_case(2000);
  c.checks.cooldown.reset();
  CHECK_FALSE(find_check(check_case(c, rate_history(100), {}), "cooldown_by_owner"));
}
