// The checks of a tier's limits and of the backoff between retries, on hand-written ledgers and logs.
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "builders.hpp"

using namespace llmchaos;
using namespace llmchaos::harness;
using namespace llmchaos::harness::test;

namespace {

// A run of failures on the primary, each retried after the given gap, then a success.
History retries_with_gaps(const std::vector<double>& gaps) {
  std::vector<LedgerEntry> ledger;
  std::vector<client::AttemptRecord> attempts;
  std::vector<client::FailurePoint> points;
  double at = 0;
  for (std::size_t i = 0; i <= gaps.size(); ++i) {
    const bool last = i == gaps.size();
    ledger.push_back(entry(i + 1, "primary", static_cast<int>(i),
                           last ? FaultKind::ok : FaultKind::overloaded, last ? 200 : 503, at, at + 1));
    attempts.push_back(attempt(static_cast<int>(i), "primary", last ? Owner::none : Owner::transient));
    if (!last) {
      points.push_back(point(static_cast<int>(i), "primary", Action::retry));
      at += 1 + gaps[i];
    }
  }
  return history(std::move(ledger), log(std::move(attempts), std::move(points), Outcome::retry_recovery));
}

Case backoff_case(double base_ms, double cap_ms) {
  auto c = make_case(Action::retry);
  c.policy.workflow.max_total_attempts = 8;
  c.policy.workflow.max_elapsed_ms = 60000;
  c.policy.backoff.base_ms = base_ms;
  c.policy.backoff.cap_ms = cap_ms;
  return c;
}

CheckOptions exact() {
  CheckOptions o;
  o.exact_time = true;
  return o;
}

}  // namespace

TEST_CASE(
    "backoff_bounds: a wait past the capped ceiling fails exactly under virtual time, a live run bounds no "
    "gap from above",
    "[checker][backoff]") {
  const auto c = backoff_case(100, 200);
  // Ceilings 100, 200, 200: the third retry waited 250 ms.
  const auto h = retries_with_gaps({80, 150, 250});
  const auto virtual_run = check_case(c, h, exact());
  const auto* bound = find_check(virtual_run, "backoff_bounds");
  REQUIRE(bound);
  CHECK_FALSE(bound->ok);
  CHECK_THAT(
      bound->message,
      Catch::Contains("waited 250.0 ms, more than the backoff allows (200.0 ms: retry 3 of the route"));
  CHECK(virtual_run.verdict == Verdict::fail);
  // Live: a loaded machine stretches gaps by hundreds of ms, so only the growth test (a lower bound) applies.
  CHECK(find_check(check_case(c, h, {}), "backoff_bounds")->ok);
  CHECK(find_check(check_case(c, retries_with_gaps({80, 150, 900}), {}), "backoff_bounds")->ok);
  CHECK(find_check(check_case(c, retries_with_gaps({80, 150, 200}), exact()), "backoff_bounds")->ok);
}

TEST_CASE("backoff_bounds: a jittered wait is bounded by the time left minus the expected latency",
          "[checker][backoff]") {
  auto c = backoff_case(40000, 40000);
  c.policy.workflow.max_total_attempts = 2;
  c.policy.workflow.max_elapsed_ms = 3000;
  c.policy.routes["primary"].expected_latency_ms = 1000;
  // The failure ended at 1 ms: 1999 ms were left for the wait.
  CHECK(find_check(check_case(c, retries_with_gaps({1999}), exact()), "backoff_bounds")->ok);
  const auto late = check_case(c, retries_with_gaps({2500}), exact());
  CHECK_FALSE(find_check(late, "backoff_bounds")->ok);
  CHECK_THAT(find_check(late, "backoff_bounds")->message, Catch::Contains("time left for it 1999.0 ms"));
}

TEST_CASE("backoff_bounds: seven retries that all waited under the base fail as a backoff that never grew",
          "[checker][backoff]") {
  const auto c = backoff_case(100, 100000);
  const auto flat = check_case(c, retries_with_gaps({60, 90, 40, 99, 70, 20, 80}), exact());
  const auto* grew = find_check(flat, "backoff_bounds");
  REQUIRE(grew);
  CHECK_FALSE(grew->ok);
  CHECK_THAT(grew->message,
             Catch::Contains("the backoff never grew: 7 retries all waited under the base 100.0 ms"));
  // One wait over the base is enough; and six retries are too few to tell (probability 2^-15 > 1e-6).
  CHECK(find_check(check_case(c, retries_with_gaps({60, 90, 40, 99, 70, 20, 180}), exact()), "backoff_bounds")
            ->ok);
  CHECK(
      find_check(check_case(c, retries_with_gaps({60, 90, 40, 99, 70, 20}), exact()), "backoff_bounds")->ok);
}

TEST_CASE("backoff_bounds: not checked for a target that does not report its decisions",
          "[checker][backoff]") {
  auto h = retries_with_gaps({5000});
  h.has_decision_log = false;
  CHECK(find_check(check_case(backoff_case(100, 200), h, exact()), "backoff_bounds") == nullptr);
}

namespace {

// Requests at the given times (ms); those marked refused never reached the mock.
History tier_history(const std::vector<double>& starts, const std::vector<bool>& refused) {
  History h;
  for (std::size_t i = 0; i < starts.size(); ++i) {
    RequestRecord r;
    const std::string key = fmt::format("op-{}", i + 1);
    if (refused[i]) {
      r.log.limited_by = "requests_per_minute";
    } else {
      r.log = log({attempt(0, "primary")}, {}, Outcome::primary_success);
      r.log.operation_id = key;
      h.ledger.push_back(entry(i + 1, "primary", static_cast<int>(h.ledger.size()), FaultKind::ok, 200,
                               starts[i], starts[i] + 5, AttemptOutcome::completed, true, key));
    }
    r.started_ms = starts[i];
    h.requests.push_back(std::move(r));
  }
  return h;
}

Case tier_case(int rpm, int refused) {
  auto c = make_case(Action::none);
  c.tier = client::RateLimits{};
  c.tier->requests_per_minute = rpm;
  c.expect_rate_limited = refused;
  c.sequence = Sequence{};
  return c;
}

}  // namespace

TEST_CASE(
    "expect_rate_limited counts the requests the tier refused, within_tier_limits reads the windows of the "
    "ledger",
    "[checker][tier]") {
  const auto h = tier_history({0, 100, 200, 300, 400}, {false, false, false, true, true});
  const auto ok = check_case(tier_case(3, 2), h, exact());
  CHECK(ok.verdict == Verdict::pass);
  CHECK_THAT(find_check(ok, "expect_rate_limited")->message,
             Catch::Contains(
                 "expected 2 request(s) refused by the tier, 2 were: request 4 (requests_per_minute), 5"));
  CHECK_THAT(find_check(ok, "within_tier_limits")->message, Catch::Contains("rpm: at most 3 request(s)"));

  const auto wrong_count = check_case(tier_case(3, 1), h, exact());
  CHECK_FALSE(find_check(wrong_count, "expect_rate_limited")->ok);
  // Four requests reached the mock inside one minute under a limit of three.
  const auto over = check_case(
      tier_case(3, 1), tier_history({0, 100, 200, 300, 400}, {false, false, false, false, true}), exact());
  CHECK_FALSE(find_check(over, "within_tier_limits")->ok);
  CHECK_THAT(find_check(over, "within_tier_limits")->message, Catch::Contains("rpm: at most 4 request(s)"));
  // A minute later the window has room again.
  CHECK(find_check(check_case(tier_case(1, 0), tier_history({0, 60000}, {false, false}), exact()),
                   "within_tier_limits")
            ->ok);
}

TEST_CASE(
    "backoff_bounds and retry_after_honoured judge the hint the ledger says the answer carried, not the "
    "script's key",
    "[checker][backoff][retry_after]") {
  // Issue 27: the script gives no retry_after_ms, the fault sends its default (1000 ms). The ledger
  // records it; a stack that waited it out is right, one that came back sooner is not.
  auto c = backoff_case(100, 200);
  c.checks.retry_after_honoured = true;
  auto with_hint = [](std::vector<double> gaps) {
    auto h = retries_with_gaps(gaps);
    for (auto& e : h.ledger)
      if (e.status >= 400) {
        e.retry_after_sent_ms = 1000;
        e.retry_after_form = "both";
      }
    return h;
  };
  const auto waited = check_case(c, with_hint({1000, 1000}), exact());
  CHECK(find_check(waited, "backoff_bounds")->ok);
  CHECK(find_check(waited, "retry_after_honoured")->ok);
  const auto early = check_case(c, with_hint({150, 1000}), exact());
  CHECK_FALSE(find_check(early, "retry_after_honoured")->ok);
  // Without a hint in the ledger (or the script), a 1000 ms wait is past the backoff.
  CHECK_FALSE(find_check(check_case(c, retries_with_gaps({1000, 1000}), exact()), "backoff_bounds")->ok);
}
