// The decision of SPEC 3: one test per rule, then the staging cases of issue 4, each from what the
// wire showed (classify) to the action (decide), with the budget taken from a BudgetLedger.
#include <array>
#include <catch2/catch.hpp>
#include <limits>
#include <random>
#include <string>

#include "llmchaos/client/budget.hpp"
#include "llmchaos/client/classifier.hpp"
#include "llmchaos/client/decision.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

namespace {

Classification failure(Owner owner, CommitState commit = CommitState::none,
                       std::optional<double> retry_after = {}) {
  Classification c;
  c.owner = owner;
  c.commit = commit;
  c.retry_after_ms = retry_after;
  return c;
}

RouteOption route(std::string name, double latency_ms = 800, double cost = 0.004) {
  RouteOption r;
  r.route = std::move(name);
  r.expected_latency_ms = latency_ms;
  r.cost_usd = cost;
  return r;
}

// A roomy budget, a primary and one approved fallback, queue and degrade off.
DecisionInput roomy(Classification f) {
  DecisionInput in;
  in.failure = std::move(f);
  in.attempts_left = 2;
  in.time_left_ms = 10000;
  in.cost_left_usd = 0.012;
  in.current = route("primary");
  in.fallbacks = {route("backup", 2000)};
  return in;
}

}  // namespace

TEST_CASE("rule 1: request, auth and policy fail closed, even with every outlet open", "[decision]") {
  for (auto owner : {Owner::request, Owner::auth, Owner::policy}) {
    auto in = roomy(failure(owner));
    in.queue_allowed = in.degrade_allowed = true;
    auto d = decide(in);
    INFO(to_string(owner));
    CHECK(d.action == Action::fail_closed);
    CHECK(d.rule == 1);
    CHECK(d.inputs.find(std::string("owner=") + std::string(to_string(owner))) != std::string::npos);
  }
}

TEST_CASE("rule 2: committed or unknown commit fails closed before any owner-based outlet", "[decision]") {
  for (auto commit : {CommitState::committed, CommitState::unknown}) {
    for (auto owner : {Owner::transient, Owner::rate, Owner::quota, Owner::unknown}) {
      auto in = roomy(failure(owner, commit));
      in.queue_allowed = true;
      auto d = decide(in);
      CHECK(d.action == Action::fail_closed);
      CHECK(d.rule == 2);
      CHECK(d.inputs.find(std::string("commit=") + std::string(to_string(commit))) != std::string::npos);
    }
  }
}

TEST_CASE("rule 3: unknown owner queues when allowed, else fails closed, never retries", "[decision]") {
  auto in = roomy(failure(Owner::unknown));
  in.queue_allowed = true;
  auto queued = decide(in);
  CHECK(queued.action == Action::queue);
  CHECK(queued.rule == 3);
  in.queue_allowed = false;
  in.degrade_allowed = true;  // rule 3 decides alone: degrade is not consulted
  auto closed = decide(in);
  CHECK(closed.action == Action::fail_closed);
  CHECK(closed.rule == 3);
}

TEST_CASE("rule 4: transient and rate retry the same route when it fits, honouring retry-after",
          "[decision]") {
  auto in = roomy(failure(Owner::rate, CommitState::none, 1000.0));
  auto d = decide(in);
  CHECK(d.action == Action::retry);
  CHECK(d.rule == 4);
  CHECK(d.target_route == "primary");
  CHECK(d.wait_ms == 1000);
  CHECK(d.inputs.find("retry_after_ms=1000") != std::string::npos);

  SECTION("time left must cover retry-after plus the expected latency, exactly at the edge is enough") {
    in.time_left_ms = 1000 + 800;
    CHECK(decide(in).action == Action::retry);
    in.time_left_ms = 1000 + 800 - 1;
    CHECK(decide(in).rule != 4);
  }
  SECTION("no attempts left") {
    in.attempts_left = 0;
    auto no = decide(in);
    CHECK(no.rule != 4);
    CHECK(no.inputs.find("retry=no(no attempts left)") != std::string::npos);
  }
  SECTION("cost left below the retry's cost") {
    in.cost_left_usd = 0.003;
    CHECK(decide(in).rule != 4);
  }
  SECTION("quota never retries the same route") {
    in.failure.owner = Owner::quota;
    CHECK(decide(in).rule == 5);
  }
}

TEST_CASE("rule 5: fallback to the first approved, healthy candidate that fits", "[decision]") {
  auto in = roomy(failure(Owner::quota));
  RouteOption unapproved = route("unapproved", 100);
  unapproved.approved = false;
  RouteOption sick = route("sick", 100);
  sick.healthy = false;
  RouteOption slow = route("slow", 20000);
  RouteOption pricey = route("pricey", 100, 1.0);
  in.fallbacks = {route("primary"),      unapproved,         sick, slow, pricey,
                  route("backup", 2000), route("later", 100)};
  auto d = decide(in);
  CHECK(d.action == Action::fallback);
  CHECK(d.rule == 5);
  CHECK(d.target_route == "backup");
  CHECK(d.wait_ms == 0);
  CHECK(d.inputs.find("fallbacks=[primary:same route,unapproved:not approved,sick:unhealthy,"
                      "slow:latency > time left,pricey:cost > cost left,backup:fits]") != std::string::npos);

  SECTION("without attempts left no candidate fits") {
    in.attempts_left = 0;
    CHECK(decide(in).rule == 7);
  }
}

TEST_CASE("rule 6: nothing fits, queueing allowed -> queue", "[decision]") {
  auto in = roomy(failure(Owner::transient));
  in.attempts_left = 0;
  in.queue_allowed = true;
  in.degrade_allowed = true;
  auto d = decide(in);
  CHECK(d.action == Action::queue);
  CHECK(d.rule == 6);
}

TEST_CASE("rule 7: degrade when approved, else fail closed", "[decision]") {
  auto in = roomy(failure(Owner::transient));
  in.attempts_left = 0;
  in.degrade_allowed = true;
  auto degraded = decide(in);
  CHECK(degraded.action == Action::degrade);
  CHECK(degraded.rule == 7);
  in.degrade_allowed = false;
  auto closed = decide(in);
  CHECK(closed.action == Action::fail_closed);
  CHECK(closed.rule == 7);
  CHECK(closed.inputs.find("degrade_allowed=false") != std::string::npos);
}

TEST_CASE("a success is not a failure point", "[decision]") {
  auto d = decide(roomy(failure(Owner::none)));
  CHECK(d.action == Action::none);
  CHECK(d.rule == 0);
}

TEST_CASE("contract: never retried or routed to a fallback, queued when allowed, else degrade or fail closed",
          "[decision]") {
  auto in = roomy(failure(Owner::contract));  // roomy: a healthy fallback fits
  in.queue_allowed = true;
  auto queued = decide(in);
  CHECK(queued.action == Action::queue);
  CHECK(queued.rule == 6);
  in.queue_allowed = false;
  auto d = decide(in);
  CHECK(d.rule == 7);
  CHECK(d.action == Action::fail_closed);
  in.degrade_allowed = true;
  CHECK(decide(in).action == Action::degrade);
}

TEST_CASE("every rule text starts with its rule number", "[decision]") {
  auto in = roomy(failure(Owner::transient));
  for (auto owner : {Owner::request, Owner::unknown, Owner::transient, Owner::quota}) {
    in.failure.owner = owner;
    auto d = decide(in);
    CHECK(d.rule_text.rfind(std::to_string(d.rule) + ":", 0) == 0);
  }
}

// ---- staging cases (issue 4), from the observed wire to the action ----------------------------

namespace {

struct Staging {
  BudgetLedger ledger{BudgetLimits{3, 8000, 0.012}, 0};
  DecisionInput input(const Observation& obs, double now_ms) {
    auto v = ledger.view(now_ms);
    DecisionInput in;
    in.failure = classify(obs);
    in.attempts_left = v.attempts_left;
    in.time_left_ms = v.time_left_ms;
    in.cost_left_usd = v.cost_left_usd;
    in.current = route("primary");
    in.fallbacks = {route("backup", 2000)};
    return in;
  }
};

Observation wire(Dialect dialect, int status, std::string body,
                 std::vector<std::pair<std::string, std::string>> headers = {}) {
  Observation o;
  o.dialect = dialect;
  o.status = status;
  o.body = std::move(body);
  o.headers = std::move(headers);
  return o;
}

}  // namespace

TEST_CASE("staging: rate 429 with a short retry-after -> retry after it", "[decision][staging]") {
  Staging s;
  s.ledger.record_attempt(AttemptKind::initial, 0.004);
  auto d = decide(s.input(wire(Dialect::openai, 429,
                               R"({"error":{"type":"requests","code":"rate_limit_exceeded","message":"x"}})",
                               {{"retry-after", "1"}, {"retry-after-ms", "500"}}),
                          100));
  CHECK(d.action == Action::retry);
  CHECK(d.rule == 4);
  CHECK(d.wait_ms == 500);
}

TEST_CASE("staging: quota 429 -> fallback", "[decision][staging]") {
  Staging s;
  s.ledger.record_attempt(AttemptKind::initial, 0.004);
  auto d = decide(
      s.input(wire(Dialect::openai, 429,
                   R"({"error":{"type":"insufficient_quota","code":"insufficient_quota","message":"x"}})"),
              100));
  CHECK(d.action == Action::fallback);
  CHECK(d.rule == 5);
  CHECK(d.target_route == "backup");
}

TEST_CASE("staging: pre-stream 503 -> retry", "[decision][staging]") {
  Staging s;
  s.ledger.record_attempt(AttemptKind::initial, 0.004);
  auto d = decide(
      s.input(wire(Dialect::gemini, 503,
                   R"({"error":{"code":503,"message":"The model is overloaded.","status":"UNAVAILABLE"}})"),
              50));
  CHECK(d.action == Action::retry);
  CHECK(d.rule == 4);
}

TEST_CASE("staging: stream cut after visible tokens -> fail closed, before any -> retry",
          "[decision][staging]") {
  Staging s;
  s.ledger.record_attempt(AttemptKind::initial, 0.004);
  Observation cut;
  cut.dialect = Dialect::anthropic;
  cut.status = 200;
  cut.event = TransportEvent::stream_closed;
  cut.visible_tokens = 3;
  auto after = decide(s.input(cut, 300));
  CHECK(after.action == Action::fail_closed);
  CHECK(after.rule == 2);
  cut.visible_tokens = 0;
  auto before = decide(s.input(cut, 300));
  CHECK(before.action == Action::retry);
  CHECK(before.rule == 4);
}

TEST_CASE("staging: timeout after a tool commit -> fail closed", "[decision][staging]") {
  Staging s;
  s.ledger.record_attempt(AttemptKind::initial, 0.004);
  Observation timeout;
  timeout.event = TransportEvent::timeout_no_byte;
  timeout.tool_committed = true;
  timeout.replay_safe = true;  // even a replay-safe workflow cannot undo an executed side effect
  auto d = decide(s.input(timeout, 2100));
  CHECK(d.action == Action::fail_closed);
  CHECK(d.rule == 2);
  CHECK(d.inputs.find("commit=committed") != std::string::npos);
}

TEST_CASE("a silent timeout: retried when replay safe, fail closed when not, a bare 500 is queued",
          "[decision][staging]") {
  // SPEC 3 rule 2: a timeout with no byte received is owner transient with commit unknown; only a
  // replay_safe workflow makes it none, and then rules 4-7 decide like any transient failure.
  Staging s;
  s.ledger.record_attempt(AttemptKind::initial, 0.004);
  Observation silence;
  silence.event = TransportEvent::timeout_no_byte;
  silence.replay_safe = true;
  auto in = s.input(silence, 2000);
  in.queue_allowed = true;
  auto safe = decide(in);
  CHECK(safe.action == Action::retry);
  CHECK(safe.rule == 4);
  silence.replay_safe = false;
  in = s.input(silence, 2000);
  in.queue_allowed = true;
  auto unsafe = decide(in);
  CHECK(unsafe.action == Action::fail_closed);
  CHECK(unsafe.rule == 2);
  // A bare 500 answered: owner unknown, rule 3 queues it, replay safe or not.
  for (bool replay_safe : {false, true}) {
    Observation bare = wire(Dialect::openai, 500, "");
    bare.replay_safe = replay_safe;
    in = s.input(bare, 100);
    in.queue_allowed = true;
    auto d = decide(in);
    CHECK(d.action == Action::queue);
    CHECK(d.rule == 3);
  }
}

TEST_CASE("staging: the fallback's answer misses a required field -> degrade or fail closed as configured",
          "[decision][staging]") {
  Staging s;
  s.ledger.record_attempt(AttemptKind::initial, 0.004);
  s.ledger.record_attempt(AttemptKind::fallback, 0.004);
  Observation missing = wire(Dialect::anthropic, 200, "");
  missing.contract_violation = true;
  auto in = s.input(missing, 2500);
  in.current = route("backup", 2000);
  in.fallbacks = {route("backup", 2000)};  // the only approved route is the one that broke the contract
  in.queue_allowed = false;                // the staging workflow does not queue
  in.degrade_allowed = true;
  auto degraded = decide(in);
  CHECK(degraded.action == Action::degrade);
  CHECK(degraded.rule == 7);
  in.degrade_allowed = false;
  auto closed = decide(in);
  CHECK(closed.action == Action::fail_closed);
  CHECK(closed.rule == 7);
}

TEST_CASE("staging: open breaker on the primary -> fallback", "[decision][staging]") {
  Staging s;
  s.ledger.record_attempt(AttemptKind::initial, 0.004);
  auto in = s.input(wire(Dialect::anthropic, 529,
                         R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})"),
                    40);
  in.current_breaker_open = true;
  auto d = decide(in);
  CHECK(d.action == Action::fallback);
  CHECK(d.rule == 5);
  CHECK(d.inputs.find("retry=no(breaker open)") != std::string::npos);
}

TEST_CASE("staging: retry-after 60 s with 8 s of SLO left and a healthy 2 s fallback -> fallback, not queue",
          "[decision][staging]") {
  Staging s;  // max_elapsed 8000 ms
  s.ledger.record_attempt(AttemptKind::initial, 0.004);
  auto in = s.input(wire(Dialect::openai, 429,
                         R"({"error":{"type":"requests","code":"rate_limit_exceeded","message":"x"}})",
                         {{"retry-after", "60"}}),
                    0);
  in.queue_allowed = true;
  auto d = decide(in);
  CHECK(d.action == Action::fallback);
  CHECK(d.rule == 5);
  CHECK(d.target_route == "backup");
  CHECK(d.wait_ms == 0);  // the retry-after was the primary's
  CHECK(d.inputs.find("retry=no(retry-after + latency > time left)") != std::string::npos);
}

TEST_CASE("decide_into overwrites a reused decision completely", "[decision]") {
  Decision d;
  auto fallback = roomy(failure(Owner::quota));
  decide_into(fallback, d);
  REQUIRE(d.action == Action::fallback);
  REQUIRE(d.target_route == "backup");
  auto request = roomy(failure(Owner::request));
  decide_into(request, d);
  const auto fresh = decide(request);
  CHECK(d.action == fresh.action);
  CHECK(d.rule == fresh.rule);
  CHECK(d.rule_text == fresh.rule_text);
  CHECK(d.inputs == fresh.inputs);
  CHECK(d.target_route.empty());
  CHECK(d.wait_ms == 0);
}

TEST_CASE("inputs print whole numbers as integers and costs without float noise", "[decision]") {
  auto in = roomy(failure(Owner::transient));
  in.cost_left_usd = 0.012 - 0.004;  // 0.008000000000000002 in binary
  in.time_left_ms = 7999.5;
  auto d = decide(in);
  CHECK(d.inputs.find("cost_left_usd=0.008 ") != std::string::npos);
  CHECK(d.inputs.find("time_left_ms=7999.5 ") != std::string::npos);
  CHECK(d.inputs.find("attempts_left=2 ") != std::string::npos);
  in.cost_left_usd = std::numeric_limits<double>::infinity();
  CHECK(decide(in).inputs.find("cost_left_usd=inf ") != std::string::npos);
}

TEST_CASE("inputs print any budget number as its value to six decimals, trailing zeros dropped",
          "[decision]") {
  // Values that are a whole number of millionths: the expected text comes from the integer, not from
  // a float formatter, so rounding cannot blur what is checked.
  std::mt19937_64 rng(42);
  auto in = roomy(failure(Owner::transient));
  for (int i = 0; i < 5000; ++i) {
    const long long scale =
        std::array<long long, 4>{1'000'000, 100'000'000, 1'000'000'000'000, 10'000}[i % 4];
    const auto micros = static_cast<long long>(rng() % static_cast<unsigned long long>(scale));
    const bool negative = i % 7 == 3;
    std::string frac = std::to_string(1'000'000 + micros % 1'000'000).substr(1);  // six digits
    while (!frac.empty() && frac.back() == '0') frac.pop_back();
    const std::string expected = (negative && micros != 0 ? "-" : "") + std::to_string(micros / 1'000'000) +
                                 (frac.empty() ? "" : "." + frac);
    in.cost_left_usd = (negative ? -1.0 : 1.0) * static_cast<double>(micros) / 1e6;
    const auto text = decide(in).inputs;
    INFO("micros " << micros << (negative ? " negative" : "") << ": " << text);
    REQUIRE(text.find("cost_left_usd=" + expected + " ") != std::string::npos);
  }
}

TEST_CASE("a very long fallback list cuts the inputs text, not the decision", "[decision]") {
  auto in = roomy(failure(Owner::quota));
  in.fallbacks.clear();
  for (int i = 0; i < 200; ++i) {
    auto r = route("unapproved-route-" + std::to_string(i), 100);
    r.approved = false;
    in.fallbacks.push_back(r);
  }
  in.fallbacks.push_back(route("last", 100));
  auto d = decide(in);
  CHECK(d.action == Action::fallback);
  CHECK(d.target_route == "last");
  CHECK(d.inputs.size() <= 1024 + 3);
  CHECK(d.inputs.substr(d.inputs.size() - 3) == "...");
}

TEST_CASE(
    "rule 0: a cut background response with an attempt and the time for it is resumed, tokens shown or not",
    "[decision][resume]") {
  for (auto commit : {CommitState::committed, CommitState::none}) {
    auto in = roomy(failure(Owner::transient, commit));
    in.resumable_cut = true;
    const auto d = decide(in);
    CHECK(d.action == Action::resume);
    CHECK(d.rule == 0);
    CHECK(d.target_route == "primary");
    CHECK(std::string_view(d.inputs).find("resumable_cut=true") != std::string_view::npos);
  }
}

TEST_CASE(
    "rule 0 boundaries: no attempt left, too little time or cost, and the stream falls to the rules after it",
    "[decision][resume]") {
  auto in = roomy(failure(Owner::transient, CommitState::committed));
  in.resumable_cut = true;
  in.current.expected_latency_ms = 800;
  // A resume is an attempt of the budget, its price included (the gate before every attempt checks it):
  // exactly the cost left fits, a cent less does not.
  in.current.cost_usd = 0.004;
  in.cost_left_usd = 0.004;
  CHECK(decide(in).action == Action::resume);
  in.cost_left_usd = 0.0039;
  auto short_of_cost = decide(in);
  CHECK(short_of_cost.action == Action::fail_closed);
  CHECK(short_of_cost.rule == 2);
  CHECK(std::string_view(short_of_cost.inputs).find("resume=no(cost > cost left)") != std::string_view::npos);
  in.cost_left_usd = 1;

  in.time_left_ms = 800;  // exactly the expected time: fits
  CHECK(decide(in).action == Action::resume);

  in.time_left_ms = 799.999;  // just short: rule 2 (tokens were visible)
  auto d = decide(in);
  CHECK(d.action == Action::fail_closed);
  CHECK(d.rule == 2);
  CHECK(std::string_view(d.inputs).find("resume=no(latency > time left)") != std::string_view::npos);

  in.time_left_ms = 10000;
  in.attempts_left = 0;
  d = decide(in);
  CHECK(d.action == Action::fail_closed);
  CHECK(d.rule == 2);
  CHECK(std::string_view(d.inputs).find("resume=no(no attempts left)") != std::string_view::npos);

  in.attempts_left = 1;
  CHECK(decide(in).action == Action::resume);
}

TEST_CASE(
    "rule 0 needs a resumable cut: the same committed cut of a stored-nothing stream fails closed by rule 2",
    "[decision][resume]") {
  auto in = roomy(failure(Owner::transient, CommitState::committed));
  const auto d = decide(in);
  CHECK(d.action == Action::fail_closed);
  CHECK(d.rule == 2);
  CHECK(std::string_view(d.inputs).find("resumable_cut") ==
        std::string_view::npos);  // the inputs text is as before
  // Before any token the same cut is a retry (rule 4), as before rule 0 existed.
  in.failure.commit = CommitState::none;
  CHECK(decide(in).action == Action::retry);
  // Not a failure stays not a failure.
  auto ok = roomy(failure(Owner::none));
  ok.resumable_cut = true;
  CHECK(decide(ok).action == Action::none);
}

TEST_CASE("rule 7: a full queue is no outlet, at rule 3 and at rule 6, decided by decide() itself",
          "[decision]") {
  // Rule 6's case: a quota failure no fallback takes (none left); rule 3's: owner unknown.
  auto at_rule_6 = roomy(failure(Owner::quota));
  at_rule_6.fallbacks.clear();
  for (auto in : {at_rule_6, roomy(failure(Owner::unknown))}) {
    INFO(to_string(in.failure.owner));
    in.queue_allowed = true;
    CHECK(decide(in).action == Action::queue);  // room in the queue
    in.queue_full = true;
    in.degrade_allowed = true;
    auto d = decide(in);
    CHECK(d.action == Action::degrade);
    CHECK(d.rule == 7);
    CHECK(d.rule_text == "7: the queue is full; degrade approved");
    in.degrade_allowed = false;
    d = decide(in);
    CHECK(d.action == Action::fail_closed);
    CHECK(d.rule == 7);
    CHECK(d.rule_text == "7: the queue is full; degrade not approved -> fail_closed");
  }
  // A full queue changes nothing when a retry or a fallback fits, or when queueing is not allowed.
  auto retried = roomy(failure(Owner::rate));
  retried.queue_allowed = retried.queue_full = true;
  CHECK(decide(retried).action == Action::retry);
  auto not_queueing = at_rule_6;
  not_queueing.queue_full = true;
  CHECK(decide(not_queueing).rule_text ==
        "7: no retry, fallback or queue, degrade not approved: fail closed");
}
