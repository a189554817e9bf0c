// The checker on hand-written ledgers and decision logs (no mock, no stack, no clock).
#include <catch2/catch.hpp>

#include "builders.hpp"

using namespace llmchaos;
using namespace llmchaos::harness;
using namespace llmchaos::harness::test;

TEST_CASE("a retry seen by both the log and the ledger passes the action check", "[checker]") {
  auto c = make_case(Action::retry);
  auto h = history({entry(1, "primary", 0, FaultKind::rate_429, 429),
                    entry(2, "primary", 1, FaultKind::ok, 200, 300, 310)},
                   log({attempt(0, "primary", Owner::rate), attempt(1, "primary")},
                       {point(0, "primary", Action::retry)}, Outcome::retry_recovery));
  auto r = check_case(c, h, {});
  CHECK(r.verdict == Verdict::pass);
  REQUIRE(r.points.size() == 1);
  CHECK(r.points[0].from_log == Action::retry);
  CHECK(r.points[0].from_ledger == Action::retry);
  CHECK(r.points[0].expected == Action::retry);
  CHECK(r.observed == Action::retry);
  CHECK(r.attempts_by_route.at("primary") == 2);
  CHECK(r.attempts_by_route.at("backup") == 0);
}

TEST_CASE("the next attempt on another route is a fallback by the ledger", "[checker]") {
  auto c = make_case(Action::fallback);
  auto h =
      history({entry(1, "primary", 0, FaultKind::quota_429, 429), entry(2, "backup", 0, FaultKind::ok, 200)},
              log({attempt(0, "primary", Owner::quota), attempt(1, "backup")},
                  {point(0, "primary", Action::fallback, 5)}, Outcome::fallback_recovery, "backup"));
  auto r = check_case(c, h, {});
  CHECK(r.verdict == Verdict::pass);
  REQUIRE(r.points.size() == 1);
  CHECK(r.points[0].from_ledger == Action::fallback);
}

TEST_CASE("a log that disagrees with the ledger fails the case and shows both", "[checker]") {
  auto c = make_case(Action::retry);
  // The stack claims a retry, but the mock saw the next attempt on the backup.
  auto h =
      history({entry(1, "primary", 0, FaultKind::overloaded, 503), entry(2, "backup", 0, FaultKind::ok, 200)},
              log({attempt(0, "primary", Owner::transient), attempt(1, "backup")},
                  {point(0, "primary", Action::retry)}, Outcome::retry_recovery, "backup"));
  auto r = check_case(c, h, {});
  CHECK(r.verdict == Verdict::fail);
  const auto* agreement = find_check(r, "action_agreement");
  REQUIRE(agreement);
  CHECK_FALSE(agreement->ok);
  CHECK_THAT(agreement->message, Catch::Contains("decision log says retry, ledger says fallback"));
}

TEST_CASE("with no next attempt the outcome decides queue, degrade or fail_closed", "[checker]") {
  const std::pair<Outcome, Action> table[] = {{Outcome::queued, Action::queue},
                                              {Outcome::degraded, Action::degrade},
                                              {Outcome::fail_closed, Action::fail_closed}};
  for (const auto& [outcome, action] : table) {
    auto c = make_case(action);
    auto h = history({entry(1, "primary", 0, FaultKind::server_500, 500)},
                     log({attempt(0, "primary", Owner::unknown)}, {point(0, "primary", action, 3)}, outcome));
    auto r = check_case(c, h, {});
    INFO(to_string(action));
    CHECK(r.verdict == Verdict::pass);
    REQUIRE(r.points.size() == 1);
    CHECK(r.points[0].from_ledger == action);
  }
}

TEST_CASE("a wrong action fails the action check with expected and observed", "[checker]") {
  auto c = make_case(Action::fallback);
  auto h = history(
      {entry(1, "primary", 0, FaultKind::server_500, 500)},
      log({attempt(0, "primary", Owner::unknown)}, {point(0, "primary", Action::queue, 3)}, Outcome::queued));
  auto r = check_case(c, h, {});
  CHECK(r.verdict == Verdict::fail);
  CHECK(r.observed == Action::queue);
  const auto* action = find_check(r, "action");
  REQUIRE(action);
  CHECK_FALSE(action->ok);
  CHECK_THAT(action->message, Catch::StartsWith("expected fallback, observed queue (3: test rule)"));
}

TEST_CASE("a cut stream reported as a success is a failure point with no action", "[checker]") {
  auto c = make_case(Action::none);
  c.checks.no_truncated_success = true;
  auto h = history({entry(1, "primary", 0, FaultKind::stream_cut, 200, 0, 5, AttemptOutcome::cut, true)},
                   log({attempt(0, "primary")}, {}, Outcome::primary_success, "primary", "hello from"));
  auto r = check_case(c, h, {});
  CHECK(r.verdict == Verdict::fail);
  REQUIRE(r.points.size() == 1);
  CHECK(r.points[0].from_log == Action::none);
  CHECK_FALSE(find_check(r, "action_agreement")->ok);
  const auto* truncated = find_check(r, "no_truncated_success");
  REQUIRE(truncated);
  CHECK_FALSE(truncated->ok);
  CHECK_THAT(truncated->message,
             Catch::Contains("\"hello from\" is not the canonical \"hello from the mock provider\""));
}

TEST_CASE("multi-failure points are pinned by expect_at", "[checker]") {
  auto c = make_case(Action::retry);
  c.expect_at = {{2, Action::retry, {}}, {3, Action::queue, {}}};
  auto h = history(
      {entry(1, "primary", 0, FaultKind::overloaded, 503), entry(2, "primary", 1, FaultKind::overloaded, 503),
       entry(3, "primary", 2, FaultKind::overloaded, 503)},
      log({attempt(0, "primary", Owner::transient), attempt(1, "primary", Owner::transient),
           attempt(2, "primary", Owner::transient)},
          {point(0, "primary", Action::retry), point(1, "primary", Action::retry),
           point(2, "primary", Action::fallback, 5)},
          Outcome::queued));
  auto r = check_case(c, h, {});
  CHECK(r.verdict == Verdict::fail);
  const auto* at = find_check(r, "expect_at");
  REQUIRE(at);
  CHECK_FALSE(at->ok);
  CHECK(at->message == "point 3: expected queue, observed fallback");
  CHECK(r.observed_actions == std::vector<Action>{Action::retry, Action::retry, Action::fallback});
}

TEST_CASE("a point with no attempt sent (open breaker) is judged by the next attempt", "[checker]") {
  auto c = make_case(Action::fallback);
  auto h = history({entry(1, "backup", 0, FaultKind::ok, 200)},
                   log({attempt(0, "backup")}, {point(-1, "primary", Action::fallback, 5)},
                       Outcome::fallback_recovery, "backup"));
  auto r = check_case(c, h, {});
  CHECK(r.verdict == Verdict::pass);
  REQUIRE(r.points.size() == 1);
  CHECK(r.points[0].from_ledger == Action::fallback);
}

TEST_CASE("a queue redelivery is not mistaken for a retry", "[checker]") {
  auto c = make_case(Action::queue);
  auto h = history(
      {entry(1, "primary", 0, FaultKind::server_500, 500),
       entry(2, "primary", 1, FaultKind::ok, 200, 50, 51)},
      log({attempt(0, "primary", Owner::unknown)}, {point(0, "primary", Action::queue, 6)}, Outcome::queued));
  auto again = log({attempt(0, "primary")}, {}, Outcome::primary_success);
  again.delivery = 2;
  h.requests[0].redeliveries.push_back(again);
  auto r = check_case(c, h, {});
  CHECK(r.verdict == Verdict::pass);
  REQUIRE(r.points.size() == 1);
  CHECK(r.points[0].from_ledger == Action::queue);
  CHECK(r.logs.size() == 2);
}

TEST_CASE("more attempts than max_total_attempts fail the invariant", "[checker]") {
  auto c = make_case(Action::retry);
  c.policy.workflow.max_total_attempts = 2;
  auto h = history(
      {entry(1, "primary", 0, FaultKind::overloaded, 503), entry(2, "primary", 1, FaultKind::overloaded, 503),
       entry(3, "primary", 2, FaultKind::ok, 200)},
      log({attempt(0, "primary", Owner::transient), attempt(1, "primary", Owner::transient),
           attempt(2, "primary")},
          {point(0, "primary", Action::retry), point(1, "primary", Action::retry)}, Outcome::retry_recovery));
  auto r = check_case(c, h, {});
  const auto* k = find_check(r, "max_total_attempts");
  REQUIRE(k);
  CHECK_FALSE(k->ok);
  CHECK_THAT(k->message, Catch::Contains("request 1: the mock received 3 attempts"));
  CHECK(r.verdict == Verdict::fail);
}

TEST_CASE("elapsed is checked against the scaled budget with the stated tolerance", "[checker]") {
  auto c = make_case(Action::none);
  CheckOptions opt;
  opt.time_scale = 0.1;  // budget 800 ms, limit 800 * 1.2 + 100 = 1060 ms
  auto within = history({entry(1, "primary", 0, FaultKind::ok, 200, 0, 1000)},
                        log({attempt(0, "primary")}, {}, Outcome::primary_success));
  CHECK(find_check(check_case(c, within, opt), "max_elapsed_ms")->ok);
  auto over = within;
  over.ledger[0].finished_at_ms = 1100;  // the mock's own view exceeds the limit
  const auto r_k = check_case(c, over, opt);
  const auto* k = find_check(r_k, "max_elapsed_ms");
  CHECK_FALSE(k->ok);
  CHECK_THAT(k->message, Catch::Contains("limit 1060 ms"));
}

TEST_CASE("extra cost is summed from the ledger at each route's price", "[checker]") {
  auto c = make_case(Action::fallback);
  c.policy.workflow.max_extra_cost_usd = 0.005;
  c.policy.routes["backup"].cost_per_attempt_usd = 0.006;
  auto h =
      history({entry(1, "primary", 0, FaultKind::quota_429, 429), entry(2, "backup", 0, FaultKind::ok, 200)},
              log({attempt(0, "primary", Owner::quota), attempt(1, "backup")},
                  {point(0, "primary", Action::fallback, 5)}, Outcome::fallback_recovery, "backup"));
  const auto r_k = check_case(c, h, {});
  const auto* k = find_check(r_k, "max_extra_cost_usd");
  REQUIRE(k);
  CHECK_FALSE(k->ok);
  CHECK_THAT(k->message, Catch::Contains("extra cost $0.0060 by the ledger"));
}

TEST_CASE(
    "an operation committed twice fails unless a tool side effect explains it or the workflow is replay-safe",
    "[checker]") {
  auto c = make_case(Action::retry);
  // A stream cut after tokens (committed), then retried and answered again: the caller saw it twice.
  auto h = history({entry(1, "primary", 0, FaultKind::stream_cut, 200, 0, 5, AttemptOutcome::cut, true),
                    entry(2, "primary", 1, FaultKind::ok, 200, 10, 15)},
                   log({attempt(0, "primary", Owner::transient), attempt(1, "primary")},
                       {point(0, "primary", Action::retry)}, Outcome::retry_recovery));
  const auto r_dup = check_case(c, h, {});
  const auto* dup = find_check(r_dup, "no_duplicate_commit");
  REQUIRE(dup);
  CHECK_FALSE(dup->ok);
  CHECK_THAT(dup->message, Catch::Contains("operation \"op-1\": 2 committed attempts (allowed 1)"));

  auto tool = h;
  tool.side_effects.push_back(SideEffect{3, "", op, "book", 6});
  CHECK(find_check(check_case(c, tool, {}), "no_duplicate_commit")->ok);

  auto twice = tool;
  twice.side_effects.push_back(SideEffect{4, "", op, "book", 16});
  CHECK_THAT(find_check(check_case(c, twice, {}), "no_duplicate_commit")->message,
             Catch::Contains("side effect executed 2 times"));

  c.policy.workflow.replay_safe = true;
  CHECK(find_check(check_case(c, h, {}), "no_duplicate_commit")->ok);
}

TEST_CASE("an attempt the mock saw but the log lost breaks the timeline", "[checker]") {
  auto c = make_case(Action::none);
  auto h = history(
      {entry(1, "primary", 0, FaultKind::overloaded, 503), entry(2, "primary", 1, FaultKind::ok, 200)},
      log({attempt(0, "primary")}, {}, Outcome::primary_success));
  auto r = check_case(c, h, {});
  const auto* k = find_check(r, "timeline");
  REQUIRE(k);
  CHECK_FALSE(k->ok);
  CHECK_THAT(k->message, Catch::Contains("#2 primary[1]"));
}

TEST_CASE("retry-after is honoured when the next attempt on the route waits at least the header",
          "[checker]") {
  auto c = make_case(Action::retry);
  c.checks.retry_after_honoured = true;
  mock::Step s;
  s.fault = FaultKind::rate_429;
  s.retry_after_ms = 5000;
  c.script.routes["primary"].steps = {s};
  CheckOptions opt;
  opt.time_scale = 0.1;  // the header said 500 ms
  auto make = [&](double second_at) {
    return history({entry(1, "primary", 0, FaultKind::rate_429, 429, 0, 10),
                    entry(2, "primary", 1, FaultKind::ok, 200, second_at, second_at + 5)},
                   log({attempt(0, "primary", Owner::rate), attempt(1, "primary")},
                       {point(0, "primary", Action::retry)}, Outcome::retry_recovery));
  };
  CHECK(find_check(check_case(c, make(520), opt), "retry_after_honoured")->ok);
  const auto r_early = check_case(c, make(300), opt);
  const auto* early = find_check(r_early, "retry_after_honoured");
  CHECK_FALSE(early->ok);
  CHECK_THAT(early->message, Catch::Contains("gap 290.0 ms, retry-after 500.0 ms"));
}

TEST_CASE("no hammering counts attempts inside a sliding window per route", "[checker]") {
  auto c = make_case(Action::retry);
  c.checks.no_hammering = NoHammering{std::string("primary"), 2, 100};
  std::vector<LedgerEntry> ledger;
  std::vector<client::AttemptRecord> attempts;
  std::vector<client::FailurePoint> points;
  const double times[] = {0, 50, 120, 140, 160};  // 50, 120, 140 fall in one 100 ms window
  for (int i = 0; i < 5; ++i) {
    ledger.push_back(entry(i + 1, "primary", i, FaultKind::overloaded, 503, times[i], times[i] + 1));
    attempts.push_back(attempt(i, "primary", Owner::transient));
  }
  auto r = check_case(c, history(ledger, log(attempts, {}, Outcome::fail_closed)), {});
  const auto* k = find_check(r, "no_hammering");
  REQUIRE(k);
  CHECK_FALSE(k->ok);
  CHECK_THAT(k->message, Catch::Contains("primary: 3 attempts within 100 ms (from 50 ms)"));
}

TEST_CASE("the answer must name the model and route that served it", "[checker]") {
  auto c = make_case(Action::fallback);
  c.checks.names_serving_route = true;
  mock::Step s;
  s.fault = FaultKind::ok;
  s.model = "claude-mock";
  c.script.routes["backup"].steps = {s};
  auto l = log({attempt(0, "primary", Owner::quota), attempt(1, "backup")},
               {point(0, "primary", Action::fallback, 5)}, Outcome::fallback_recovery, "backup");
  l.model = "gpt-mock";  // the stack reports the primary's model
  auto h = history(
      {entry(1, "primary", 0, FaultKind::quota_429, 429), entry(2, "backup", 0, FaultKind::ok, 200)}, l);
  const auto r_k = check_case(c, h, {});
  const auto* k = find_check(r_k, "names_serving_route");
  REQUIRE(k);
  CHECK_FALSE(k->ok);
  CHECK(k->message == "request 1: model \"gpt-mock\" (served \"claude-mock\")");
}

TEST_CASE("the steps are replayed like the engine: times, then windows", "[checker]") {
  mock::Script script;
  auto& r = script.routes["primary"];
  mock::Step a, b, w;
  a.fault = FaultKind::overloaded;
  a.times = 2;
  w.fault = FaultKind::rate_429;
  w.until_ms = 1000;  // every attempt before 1 s (scaled: 100 ms)
  b.fault = FaultKind::quota_429;
  r.steps = {a, w, b};
  std::vector<LedgerEntry> ledger{entry(1, "primary", 0, FaultKind::overloaded, 503, 0),
                                  entry(2, "primary", 1, FaultKind::overloaded, 503, 10),
                                  entry(3, "primary", 2, FaultKind::rate_429, 429, 20),
                                  entry(4, "primary", 3, FaultKind::rate_429, 429, 90),
                                  entry(5, "primary", 4, FaultKind::quota_429, 429, 120),
                                  entry(6, "primary", 5, FaultKind::ok, 200, 130)};
  auto steps = resolve_steps(script, ledger, 0.1);
  CHECK(steps.at(1) == &r.steps[0]);
  CHECK(steps.at(2) == &r.steps[0]);
  CHECK(steps.at(3) == &r.steps[1]);
  CHECK(steps.at(4) == &r.steps[1]);
  CHECK(steps.at(5) == &r.steps[2]);
  CHECK(steps.at(6) == nullptr);  // past the script: `then`
}

TEST_CASE("sequence checks: served during the outage, recovered after it, probes limited", "[checker]") {
  auto c = make_case(Action::fallback);
  c.sequence = Sequence{};
  c.sequence->count = 4;
  c.sequence->outage_route = "primary";
  c.sequence->served_during_outage = true;
  c.sequence->recovered_within_ms = 100;
  c.sequence->max_outage_attempts = 1;
  mock::Step outage;
  outage.fault = FaultKind::overloaded;
  outage.until_ms = 250;
  c.script.routes["primary"].steps = {outage};

  History h;
  auto request = [&](const std::string& key, double at, client::DecisionLog l) {
    l.operation_id = key;
    RequestRecord r;
    r.log = std::move(l);
    r.started_ms = at;
    h.requests.push_back(std::move(r));
  };
  // 0: primary fails -> fallback; 1, 2: primary probed again (a second outage attempt) -> fallback; 3:
  // primary.
  h.ledger = {
      entry(1, "primary", 0, FaultKind::overloaded, 503, 0, 1, AttemptOutcome::completed, false, "a"),
      entry(2, "backup", 0, FaultKind::ok, 200, 2, 3, AttemptOutcome::completed, false, "a"),
      entry(3, "primary", 1, FaultKind::overloaded, 503, 100, 101, AttemptOutcome::completed, false, "b"),
      entry(4, "backup", 1, FaultKind::ok, 200, 102, 103, AttemptOutcome::completed, false, "b"),
      entry(5, "backup", 2, FaultKind::ok, 200, 200, 201, AttemptOutcome::completed, false, "c"),
      entry(6, "primary", 2, FaultKind::ok, 200, 400, 401, AttemptOutcome::completed, false, "d")};
  const auto fb = [&] {
    return log({attempt(0, "primary", Owner::transient), attempt(1, "backup")},
               {point(0, "primary", Action::fallback, 5)}, Outcome::fallback_recovery, "backup");
  };
  request("a", 0, fb());
  request("b", 100, fb());
  request("c", 200,
          log({attempt(0, "backup")}, {point(-1, "primary", Action::fallback, 5)}, Outcome::fallback_recovery,
              "backup"));
  request("d", 400, log({attempt(0, "primary")}, {}, Outcome::primary_success));

  CheckOptions opt;  // outage ends at 250 ms; recovered from 350 ms
  auto r = check_case(c, h, opt);
  CHECK(find_check(r, "served_during_outage")->ok);
  CHECK(find_check(r, "recovered_within")->ok);
  const auto* probes = find_check(r, "max_outage_attempts");
  CHECK_FALSE(probes->ok);
  CHECK(probes->message == "2 attempt(s) on \"primary\" during the outage (until 250 ms), at most 1");
  CHECK(r.points.size() == 3);
  CHECK(find_check(r, "action_agreement")->ok);

  h.requests[3].log = log({attempt(0, "backup")}, {point(-1, "primary", Action::fallback, 5)},
                          Outcome::fallback_recovery, "backup");
  h.requests[3].log.operation_id = "d";
  h.ledger[5].route = "backup";
  const auto r_rec = check_case(c, h, opt);
  const auto* rec = find_check(r_rec, "recovered_within");
  CHECK_FALSE(rec->ok);
  CHECK_THAT(rec->message, Catch::Contains("request 4 at 400 ms: fallback_recovery via \"backup\""));
}

TEST_CASE("without a decision log the actions come from the ledger alone", "[checker]") {
  auto c = make_case(Action::fallback);
  client::DecisionLog l;  // what an exec driver knows: the outcome and the answer
  l.outcome = Outcome::fallback_recovery;
  l.answered = true;
  l.operation_id = op;
  auto h = history(
      {entry(1, "primary", 0, FaultKind::quota_429, 429), entry(2, "backup", 0, FaultKind::ok, 200)}, l);
  h.has_decision_log = false;
  auto r = check_case(c, h, {});
  CHECK(r.verdict == Verdict::pass);
  CHECK(r.observed == Action::fallback);
  CHECK(find_check(r, "timeline") == nullptr);
}

TEST_CASE("without a decision log no_hang times the call as the mock saw it, not the program's start-up",
          "[checker]") {
  auto c = make_case(Action::none);
  c.checks.no_hang_ms = 3000;
  client::DecisionLog l;  // an exec program: node took 6 s to load before its one attempt, 2 s to exit after
  l.outcome = Outcome::primary_success;
  l.answered = true;
  l.operation_id = op;
  l.elapsed_ms = 400;  // the exec driver's measure: first arrival to last answer
  auto h = history({entry(1, "primary", 0, FaultKind::ok, 200, 6000, 6400)}, l);
  h.requests[0].wall_ms = 8500;
  h.has_decision_log = false;
  const auto r = check_case(c, h, {});
  const auto* quick = find_check(r, "no_hang");
  REQUIRE(quick != nullptr);
  CHECK(quick->ok);
  CHECK(quick->message == "longest call 400 ms, bound 3100 ms");  // the bound has its 100 ms tolerance
  // A client that holds its attempt open for 4 s still hangs (the mock sees the close at 10 s).
  h.ledger[0].finished_at_ms = 10'000;
  CHECK(find_check(check_case(c, h, {}), "no_hang")->message == "longest call 4000 ms, bound 3100 ms");
  // An http target's measure is the caller's wait, the longer one.
  h.ledger[0].finished_at_ms = 6400;
  h.requests[0].log.elapsed_ms = 5000;
  CHECK_FALSE(find_check(check_case(c, h, {}), "no_hang")->ok);
  // With a decision log (the stack in process) the whole wait is the call.
  h.has_decision_log = true;
  CHECK(find_check(check_case(c, h, {}), "no_hang")->message == "longest call 8500 ms, bound 3100 ms");
}

TEST_CASE("the worst verdict wins", "[checker]") {
  CHECK(combine({{"a", true, ""}}, false) == Verdict::pass);
  CHECK(combine({{"a", true, ""}, {"b", false, ""}}, false) == Verdict::fail);
  CHECK(combine({{"a", true, ""}, {"b", false, ""}}, true) == Verdict::unknown);
}

TEST_CASE("an answer the output contract rejected is no commit the caller could repeat", "[checker]") {
  auto c = make_case(Action::fallback);
  c.policy.workflow.output_required = {"label"};
  auto h = history(
      {entry(1, "primary", 0, FaultKind::schema_missing, 200), entry(2, "backup", 0, FaultKind::ok, 200)},
      log({attempt(0, "primary", Owner::contract), attempt(1, "backup")},
          {point(0, "primary", Action::fallback, 5)}, Outcome::fallback_recovery, "backup"));
  REQUIRE(h.ledger[0].committed);  // the provider did the work
  const auto r = check_case(c, h, {});
  CHECK(find_check(r, "no_duplicate_commit")->ok);
  REQUIRE(r.points.size() == 1);
  CHECK(r.points[0].from_ledger == Action::fallback);  // a contract failure is a failure point by the ledger
}

TEST_CASE("under an output contract a stream broken after content events is no commit, a post-commit hold is",
          "[checker]") {
  auto c = make_case(Action::retry);
  c.policy.workflow.output_required = {"label"};
  auto stalled =
      entry(1, "primary", 0, FaultKind::stream_stall, 200, 0, 2000, AttemptOutcome::client_closed, true);
  stalled.events_sent = 1;  // a token left the mock, but the stack held it back for the contract
  auto h = history({stalled, entry(2, "primary", 1, FaultKind::ok, 200)},
                   log({attempt(0, "primary", Owner::transient), attempt(1, "primary")},
                       {point(0, "primary", Action::retry, 4)}, Outcome::retry_recovery, "primary"));
  CHECK(find_check(check_case(c, h, {}), "no_duplicate_commit")->ok);
  // An error event ends the HTTP response properly, but the answer is still not whole.
  auto errored = entry(1, "primary", 0, FaultKind::stream_error, 200, 0, 5, AttemptOutcome::completed, true);
  errored.events_sent = 1;
  auto h_error = h;
  h_error.ledger[0] = errored;
  CHECK(find_check(check_case(c, h_error, {}), "no_duplicate_commit")->ok);

  // Without the contract the same tokens were visible: answering again is a second commit.
  auto open = c;
  open.policy.workflow.output_required.clear();
  CHECK_FALSE(find_check(check_case(open, h, {}), "no_duplicate_commit")->ok);

  // A commit on arrival (no event sent, never completed) is the provider's work, contract or not.
  auto held =
      entry(1, "primary", 0, FaultKind::post_commit_timeout, 0, 0, 2000, AttemptOutcome::client_closed, true);
  h.ledger[0] = held;
  CHECK_FALSE(find_check(check_case(c, h, {}), "no_duplicate_commit")->ok);
}
