// The independent SPEC 3 model of `llmchaos explore`: rule by rule on literal histories, and against every
// expectation the catalog pins (written by hand from the SPEC).
#include <fmt/format.h>

#include <catch2/catch.hpp>

#include "builders.hpp"
#include "llmchaos/harness/runner.hpp"
#include "llmchaos/harness/spec_model.hpp"
#include "test_env.hpp"

using namespace llmchaos;
using namespace llmchaos::harness;
using test::entry;

namespace {

Case base_case() {
  Case c = test::make_case(Action::none);
  c.policy.routes["primary"].expected_latency_ms = 300;
  c.policy.routes["backup"].expected_latency_ms = 500;
  return c;
}

mock::Step step(FaultKind f) {
  mock::Step s;
  s.fault = f;
  return s;
}

// One failed attempt on the primary, judged alone.
SpecPoint judge_one(const Case& c, const LedgerEntry& e) {
  const auto points = spec_points(c, test::history({e}, test::log({}, {}, Outcome::fail_closed)), 1);
  REQUIRE(points.size() == 1);
  return points.front();
}

}  // namespace

TEST_CASE("spec model: a retry-after longer than the time left sends a rate 429 to the fallback (rule 5)",
          "[spec_model]") {
  Case c = base_case();
  auto s = step(FaultKind::rate_429);
  s.retry_after_ms = 60000;
  c.script.routes["primary"].steps = {s};
  const auto p = judge_one(c, entry(1, "primary", 0, FaultKind::rate_429, 429, 0, 10));
  CHECK(p.owner == Owner::rate);
  REQUIRE(p.action);
  CHECK(*p.action == Action::fallback);
  CHECK(p.target == "backup");
  CHECK(p.rule == 5);
}

TEST_CASE("spec model: a short retry-after that fits is retried on the same route (rule 4)", "[spec_model]") {
  Case c = base_case();
  auto s = step(FaultKind::rate_429);
  s.retry_after_ms = 500;
  c.script.routes["primary"].steps = {s};
  const auto p = judge_one(c, entry(1, "primary", 0, FaultKind::rate_429, 429, 0, 10));
  CHECK(*p.action == Action::retry);
  CHECK(p.rule == 4);
}

TEST_CASE(
    "spec model: silence with no byte is transient, an unknown commit unless the workflow is replay-safe",
    "[spec_model]") {
  Case c = base_case();
  c.policy.workflow.queue_allowed = true;
  const auto silent =
      entry(1, "primary", 0, FaultKind::no_response, 0, 0, 2000, AttemptOutcome::held_then_closed);
  SECTION("not replay-safe: rule 2 fails closed") {
    const auto p = judge_one(c, silent);
    CHECK(p.owner == Owner::transient);
    CHECK(p.commit == CommitState::unknown);
    CHECK(*p.action == Action::fail_closed);
    CHECK(p.rule == 2);
  }
  SECTION("replay-safe: owner transient, commit none, rule 4 retries") {
    c.policy.workflow.replay_safe = true;
    const auto p = judge_one(c, silent);
    CHECK(p.owner == Owner::transient);
    CHECK(p.commit == CommitState::none);
    CHECK(*p.action == Action::retry);
    CHECK(p.rule == 4);
  }
  SECTION("replay-safe, a plain answer later than the timeout (slow_first_token): the same retry") {
    c.policy.workflow.replay_safe = true;
    const auto p = judge_one(
        c, entry(1, "primary", 0, FaultKind::slow_first_token, 0, 0, 2000, AttemptOutcome::client_closed));
    CHECK(p.owner == Owner::transient);
    CHECK(*p.action == Action::retry);
    CHECK(p.rule == 4);
  }
  SECTION("a bare 500 answered: owner unknown, rule 3 queues, replay-safe or not") {
    for (bool replay_safe : {false, true}) {
      c.policy.workflow.replay_safe = replay_safe;
      const auto p = judge_one(c, entry(1, "primary", 0, FaultKind::server_500, 500, 0, 10));
      CHECK(p.owner == Owner::unknown);
      CHECK(*p.action == Action::queue);
      CHECK(p.rule == 3);
    }
  }
  SECTION("a reset before any byte is transient and not committed: rule 4 retries") {
    const auto p =
        judge_one(c, entry(1, "primary", 0, FaultKind::connect_reset, 0, 0, 1, AttemptOutcome::reset));
    CHECK(p.owner == Owner::transient);
    CHECK(*p.action == Action::retry);
  }
}

TEST_CASE("spec model: a stream cut is committed after a visible token, not before", "[spec_model]") {
  Case c = base_case();
  auto cut = entry(1, "primary", 0, FaultKind::stream_cut, 200, 0, 10, AttemptOutcome::cut);
  cut.stream = true;
  SECTION("after two tokens: rule 2") {
    cut.events_sent = 2;
    const auto p = judge_one(c, cut);
    CHECK(p.commit == CommitState::committed);
    CHECK(*p.action == Action::fail_closed);
  }
  SECTION("before any token: rule 4") {
    cut.events_sent = 0;
    const auto p = judge_one(c, cut);
    CHECK(p.commit == CommitState::none);
    CHECK(*p.action == Action::retry);
  }
  SECTION("under an output contract the tokens are held back, so nothing was visible") {
    c.policy.workflow.output_required = {"label"};
    cut.events_sent = 2;
    CHECK(judge_one(c, cut).commit == CommitState::none);
  }
}

TEST_CASE("spec model: a contract failure is never a fallback (rule 5 lists transient, rate, quota)",
          "[spec_model]") {
  Case c = base_case();
  c.policy.workflow.output_required = {"label"};
  c.script.routes["primary"].default_text = R"({"label": "positive", "note": "x"})";
  c.script.routes["primary"].steps = {step(FaultKind::schema_missing)};
  const auto missing = entry(1, "primary", 0, FaultKind::schema_missing, 200, 0, 10);
  SECTION("queueing allowed: rule 6") {
    c.policy.workflow.queue_allowed = true;
    const auto p = judge_one(c, missing);
    CHECK(p.owner == Owner::contract);
    CHECK(*p.action == Action::queue);
    CHECK(p.rule == 6);
  }
  SECTION("no queue, degrade approved: rule 7") {
    c.policy.workflow.degrade_allowed = true;
    CHECK(*judge_one(c, missing).action == Action::degrade);
  }
  SECTION("a healthy answer that meets the contract is no failure point") {
    c.script.routes["primary"].steps.clear();
    const auto points =
        spec_points(c,
                    test::history({entry(1, "primary", 0, FaultKind::ok, 200)},
                                  test::log({test::attempt(0, "primary")}, {}, Outcome::primary_success)),
                    1);
    CHECK(points.empty());
  }
}

TEST_CASE("spec model: the budget counts every attempt of the request", "[spec_model]") {
  Case c = base_case();
  c.policy.workflow.fallback.clear();
  c.policy.workflow.queue_allowed = true;
  std::vector<LedgerEntry> ledger;
  for (int i = 0; i < 3; ++i)
    ledger.push_back(entry(static_cast<std::uint64_t>(i + 1), "primary", i, FaultKind::overloaded, 503,
                           i * 100.0, i * 100.0 + 10));
  const auto points = spec_points(c, test::history(ledger, test::log({}, {}, Outcome::queued)), 1);
  REQUIRE(points.size() == 3);
  CHECK(*points[0].action == Action::retry);
  CHECK(*points[1].action == Action::retry);
  CHECK(*points[2].action == Action::queue);  // attempts left 0: rules 4 and 5 cannot apply
  CHECK(points[2].rule == 6);
}

TEST_CASE("spec model: once failures reach a breaker's threshold, later points are not judged",
          "[spec_model]") {
  Case c = base_case();
  c.policy.routes["primary"].breaker.failure_threshold = 2;
  std::vector<LedgerEntry> ledger{entry(1, "primary", 0, FaultKind::overloaded, 503, 0, 10),
                                  entry(2, "primary", 1, FaultKind::overloaded, 503, 100, 110)};
  const auto points = spec_points(c, test::history(ledger, test::log({}, {}, Outcome::fail_closed)), 1);
  REQUIRE(points.size() == 2);
  CHECK(points[0].action);
  CHECK_FALSE(points[1].action);
}

TEST_CASE("spec model: a stack action that differs from SPEC 3 is named with both rules", "[spec_model]") {
  Case c = base_case();
  auto s = step(FaultKind::rate_429);
  s.retry_after_ms = 60000;
  c.script.routes["primary"].steps = {s};
  const auto h = test::history({entry(1, "primary", 0, FaultKind::rate_429, 429, 0, 10)},
                               test::log({test::attempt(0, "primary", Owner::rate)},
                                         {test::point(0, "primary", Action::queue, 6)}, Outcome::queued));
  const auto model = spec_points(c, h, 1);
  const auto diff = compare_with_spec(h, model);
  REQUIRE(diff.size() == 1);
  CHECK(diff.front().point == 1);
  CHECK_THAT(diff.front().message,
             Catch::Contains("SPEC 3 says fallback to backup") && Catch::Contains("the stack did queue"));
}

TEST_CASE("spec model: agrees with every action the catalog pins, wherever it judges",
          "[spec_model][catalog]") {
  auto suite = load_suite({test::source_dir() + "/cases"}, {});
  REQUIRE(suite.errors.empty());
  RunOptions o;
  o.virtual_time = true;
  int judged = 0;
  std::vector<std::string> differ;
  for (const auto& c : suite.cases) {
    const auto run = run_case_virtual(c, o);
    for (const auto& p : spec_points(c, run.history, 1)) {
      const auto pinned = c.expected_at(p.point);
      if (!p.action || !pinned) continue;
      ++judged;
      if (*p.action != *pinned)
        differ.push_back(fmt::format("{}: point {}: the case expects {}, the model says {} ({})", c.name,
                                     p.point, to_string(*pinned), to_string(*p.action), p.why));
    }
  }
  INFO(fmt::format("{}", fmt::join(differ, "\n")));
  CHECK(differ.empty());
  CHECK(judged > 80);
}
