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

TEST_CASE("cooldown_by_owner: a rate 429 cools the route for its Retry-After, and no longer",
          "[checker][cooldown]") {
  const auto c = cooldown_case(2000);
  CheckOptions opt;
  opt.exact_time = true;
  CHECK(find_check(check_case(c, rate_history(2010), opt), "cooldown_by_owner")->ok);
  const auto early = check_case(c, rate_history(1000), opt);
  CHECK_FALSE(find_check(early, "cooldown_by_owner")->ok);
  CHECK_THAT(find_check(early, "cooldown_by_owner")->message,
             Catch::Contains("inside the rate cooldown ending at 2010 ms"));
  // The fallback served at 5000 ms while primary had been free since 2010 ms: kept cool too long.
  const auto late = check_case(c, rate_history(6000, 5000), opt);
  CHECK_FALSE(find_check(late, "cooldown_by_owner")->ok);
  CHECK_THAT(find_check(late, "cooldown_by_owner")->message, Catch::Contains("cooldown ended at 2010 ms"));
}

TEST_CASE("cooldown_by_owner: with no retry_after_ms the hint is the fault's default",
          "[checker][cooldown]") {
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
  const auto lg = log({attempt(0, "primary", Owner::quota), attempt(0, "backup")},
                      {point(0, "primary", Action::fallback)}, Outcome::fallback_recovery);
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

namespace {

// Two requests through one stack: the first abandons primary (the caller's own timeout: closed while the
// provider, healthy and slow, was still answering), retries it and is served; the second starts on
// `second_route` at 3000 ms.
History abandoned_then_next(const std::string& second_route, FaultKind abandoned_fault = FaultKind::slow) {
  std::vector<LedgerEntry> ledger{
      entry(1, "primary", 0, abandoned_fault, 0, 0, 1000, AttemptOutcome::client_closed, false, "op-1"),
      entry(2, "primary", 1, FaultKind::ok, 200, 1010, 1020, AttemptOutcome::completed, false, "op-1"),
      entry(3, second_route, second_route == "primary" ? 2 : 0, FaultKind::ok, 200, 3000, 3010,
            AttemptOutcome::completed, false, "op-2")};
  auto first = log({attempt(0, "primary", Owner::transient), attempt(1, "primary")},
                   {point(0, "primary", Action::retry)}, Outcome::retry_recovery);
  auto second =
      log({attempt(0, second_route)}, {},
          second_route == "primary" ? Outcome::primary_success : Outcome::fallback_recovery, second_route);
  second.operation_id = "op-2";
  auto h = history(ledger, first);
  RequestRecord r;
  r.log = second;
  r.started_ms = 3000;
  h.requests.push_back(r);
  return h;
}

Case caller_timeout_case() {
  auto c = make_case(Action::retry);
  c.checks.cooldown = Cooldown{};
  c.checks.cooldown->caller_timeout_no_cooldown = true;
  return c;
}

// primary fails (a rate 429), and backup serves `gap` ms after that failure ended.
History fallback_after(double gap) {
  std::vector<LedgerEntry> ledger{entry(1, "primary", 0, FaultKind::rate_429, 429, 0, 10),
                                  entry(2, "backup", 0, FaultKind::ok, 200, 10 + gap, 20 + gap)};
  return history(ledger,
                 log({attempt(0, "primary", Owner::rate), attempt(1, "backup")},
                     {point(0, "primary", Action::fallback, 5)}, Outcome::fallback_recovery, "backup"));
}

Case fallback_case(double within_ms) {
  auto c = make_case(Action::fallback);
  c.checks.cooldown = Cooldown{};
  c.checks.cooldown->fallback_within_ms = within_ms;
  return c;
}

}  // namespace

TEST_CASE("caller_timeout_no_cooldown: the caller's own timeout does not send the next request elsewhere",
          "[checker][cooldown]") {
  const auto c = caller_timeout_case();
  const auto ok = check_case(c, abandoned_then_next("primary"), {});
  REQUIRE(find_check(ok, "caller_timeout_no_cooldown"));
  CHECK(find_check(ok, "caller_timeout_no_cooldown")->ok);
  CHECK_THAT(find_check(ok, "caller_timeout_no_cooldown")->message,
             Catch::Contains("1 request(s) after an abandoned"));
  const auto cooled = check_case(c, abandoned_then_next("backup"), {});
  CHECK_FALSE(find_check(cooled, "caller_timeout_no_cooldown")->ok);
  CHECK_THAT(
      find_check(cooled, "caller_timeout_no_cooldown")->message,
      Catch::Contains("the caller abandoned #1 on primary") && Catch::Contains("started on backup (#3"));
}

TEST_CASE("caller_timeout_no_cooldown: a provider's own failure may cool the route; no check without the key",
          "[checker][cooldown]") {
  auto c = caller_timeout_case();
  // The provider stalled the stream itself (a fault, not a healthy slow answer): not the caller's doing.
  const auto stalled = check_case(c, abandoned_then_next("backup", FaultKind::stream_stall), {});
  CHECK(find_check(stalled, "caller_timeout_no_cooldown")->ok);
  CHECK_THAT(find_check(stalled, "caller_timeout_no_cooldown")->message,
             Catch::Contains("no request followed"));
  c.checks.cooldown->caller_timeout_no_cooldown = false;
  CHECK_FALSE(find_check(check_case(c, abandoned_then_next("backup"), {}), "caller_timeout_no_cooldown"));
}

TEST_CASE("fallback_without_waiting: the fallback starts within the bound, not after a backoff",
          "[checker][cooldown]") {
  const auto c = fallback_case(50);
  CheckOptions opt;
  opt.exact_time = true;
  opt.elapsed_tolerance_ms = 0;
  CHECK(find_check(check_case(c, fallback_after(2), opt), "fallback_without_waiting")->ok);
  CHECK(find_check(check_case(c, fallback_after(50), opt), "fallback_without_waiting")->ok);
  const auto waited = check_case(c, fallback_after(2000), opt);
  CHECK_FALSE(find_check(waited, "fallback_without_waiting")->ok);
  CHECK_THAT(find_check(waited, "fallback_without_waiting")->message,
             Catch::Contains("#2 on backup started 2000 ms after #1 on primary failed (bound 50 ms)"));
  // A retry of the same route is no fallback: its wait is the backoff's to judge.
  auto retry = rate_history(2010);
  CHECK_THAT(find_check(check_case(c, retry, opt), "fallback_without_waiting")->message,
             Catch::Contains("no fallback was taken"));
  CHECK_FALSE(
      find_check(check_case(cooldown_case(2000), fallback_after(2000), opt), "fallback_without_waiting"));
}

namespace {

// Both routes answer a quota 429 (the quota window: 60 s), and the stack refuses the request at 25 ms,
// telling the caller to wait `wait` ms (none: no Retry-After).
History every_route_quota(std::optional<double> wait) {
  std::vector<LedgerEntry> ledger{entry(1, "primary", 0, FaultKind::quota_429, 429, 0, 10),
                                  entry(2, "backup", 0, FaultKind::quota_429, 429, 10, 20)};
  auto l = log({attempt(0, "primary", Owner::quota), attempt(1, "backup", Owner::quota)},
               {point(0, "primary", Action::fallback, 5), point(1, "backup", Action::fail_closed, 7)},
               Outcome::fail_closed);
  l.retry_after_ms = wait;
  auto h = history(ledger, l);
  h.requests.front().wall_ms = 25;
  return h;
}

Case forwarded_case() {
  auto c = make_case(Action::fallback);
  c.checks.cooldown = Cooldown{};
  c.checks.cooldown->quota_window_ms = 60'000;
  c.checks.cooldown->retry_after_forwarded = true;
  return c;
}

}  // namespace

TEST_CASE("retry_after_forwarded: a refusal while every route cools points past the soonest end",
          "[checker][cooldown]") {
  const auto c = forwarded_case();
  const auto ok = check_case(c, every_route_quota(59'985), {});  // 25 + 59985 = 60010: primary's end
  REQUIRE(find_check(ok, "retry_after_forwarded"));
  CHECK(find_check(ok, "retry_after_forwarded")->ok);
  const auto early = check_case(c, every_route_quota(1000), {});
  CHECK_FALSE(find_check(early, "retry_after_forwarded")->ok);
  CHECK_THAT(find_check(early, "retry_after_forwarded")->message,
             Catch::Contains("Retry-After of 1000 ms, before the soonest cooldown end at 60010 ms"));
  const auto none = check_case(c, every_route_quota(std::nullopt), {});
  CHECK_FALSE(find_check(none, "retry_after_forwarded")->ok);
  CHECK_THAT(find_check(none, "retry_after_forwarded")->message, Catch::Contains("with no Retry-After"));
}

TEST_CASE("retry_after_forwarded: judged only while every route cools, and where the answer is seen",
          "[checker][cooldown]") {
  auto c = forwarded_case();
  auto h = every_route_quota(std::nullopt);
  h.ledger.back().fault = FaultKind::server_500;  // backup failed, but does not cool
  h.ledger.back().status = 500;
  CHECK_THAT(find_check(check_case(c, h, {}), "retry_after_forwarded")->message,
             Catch::Contains("no request was refused"));
  auto blind = every_route_quota(std::nullopt);
  blind.has_decision_log = false;  // exec: the target's own answer is not seen
  CHECK_FALSE(find_check(check_case(c, blind, {}), "retry_after_forwarded"));
}
