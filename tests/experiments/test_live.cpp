// Live modes against the real mock provider on 127.0.0.1 (port 0). Assertions are on counters, the
// ledger, and agreement with the offline / simulated figures within the tolerance each mode states.
#include <catch2/catch.hpp>
#include <cmath>
#include <vector>

#include "llmchaos/experiments/overload_live.hpp"
#include "llmchaos/experiments/replay_live.hpp"
#include "test_env.hpp"

using namespace llmchaos::experiments;

namespace {
// 30 requests whose first primary attempt is never within 1.2 s of a T used below (2 and 4.5 s), so no
// request may land on either side of T: fast answers (0.3-0.8 s), slow answers (6-7 s) and failures.
std::vector<TraceRow> live_trace() {
  std::vector<TraceRow> rows;
  for (int i = 0; i < 30; ++i) {
    const double f = static_cast<double>(i % 6) / 10.0;  // 0 .. 0.5
    TraceAttempt first;
    switch (i % 5) {
      case 0:
        first = {6.0 + f, true};
        break;  // slow: both timeouts fire
      case 1:
        first = {1.0, false};
        break;  // fails early: acted on at T
      default:
        first = {0.3 + f, true};
        break;  // fast
    }
    const TraceAttempt second = {0.4 + f, i % 7 != 3};  // the retry fails now and then
    const TraceAttempt alternate = {0.9 + f, i % 11 != 4};
    rows.push_back({first, second, alternate});
  }
  return rows;
}
}  // namespace

TEST_CASE("live replay through the mock agrees with the offline replay within its tolerance",
          "[experiments][live]") {
  const auto trace = live_trace();
  const auto configs = policy_configs(std::vector<double>{2.0, 4.5});
  LiveReplayOptions options;
  options.time_scale =
      0.05 * llmchaos::test::slowdown();  // 1 s of the trace = 50 ms (under a sanitizer: more)
  options.concurrency = 8;
  options.jitter_ms = 60;  // guard 1.2 s of trace time: generous for a loaded CI machine
  const auto live = replay_live(trace, configs, options);
  const auto agreement = compare_live(trace, configs, live, options);
  for (const auto& d : agreement.disagreements) UNSCOPED_INFO(d);
  CHECK(agreement.disagreements.empty());
  const auto offline = evaluate_all(trace, configs);
  REQUIRE(live.stats.size() == offline.size());
  std::size_t expected_attempts = 0;
  for (std::size_t c = 0; c < configs.size(); ++c) {
    CHECK(live.stats[c].successes == offline[c].successes);
    CHECK(live.stats[c].extra_calls == offline[c].extra_calls);
    expected_attempts += trace.size() + offline[c].extra_calls;
  }
  CHECK(live.mock_attempts == expected_attempts);  // the mock's ledger: no hidden retries, none lost
}

TEST_CASE("comparing live and offline ignores requests near T and names every other mismatch",
          "[experiments][live]") {
  const std::vector<TraceRow> trace = {
      {{1.0, true}, {1.0, true}, {1.0, true}},   // far from T = 3
      {{2.9, true}, {1.0, true}, {1.0, true}},   // within the guard of T = 3
      {{5.0, true}, {1.0, false}, {1.0, true}},  // far; retry fails
  };
  const std::vector<PolicyConfig> configs = {{ReplayPolicy::retry, 3}};
  LiveReplayOptions options;
  options.time_scale = 0.1;
  options.jitter_ms = 20;  // guard 0.2 s
  LiveReplayResult live;
  live.outcomes = {{{true, 1.01, 0}, {false, 4.0, 1}, {false, 4.0, 1}}};
  live.mock_attempts = 5;
  CHECK(compare_live(trace, configs, live, options).disagreements.empty());

  live.outcomes[0][0].latency_sec = 1.5;  // beyond 0.2 s + 2%
  live.mock_attempts = 6;                 // one attempt the client did not report
  const auto bad = compare_live(trace, configs, live, options);
  REQUIRE(bad.disagreements.size() == 2);
  CHECK(bad.disagreements[0] == "retry T=3 request 0: offline 1.000 s, live 1.500 s");
  CHECK(bad.disagreements[1] ==
        "the mock saw 6 attempts, the client reports 5 (one per request plus extra calls)");
}

TEST_CASE("a short live overload run agrees with its simulation within the stated tolerance",
          "[experiments][live]") {
  const double slower = llmchaos::test::slowdown();  // a sanitizer's build: the same run, slowed down alike
  OverloadSettings settings;
  settings.capacity_per_sec = 40 / slower;  // 40/s x 50 ms = 2 model slots
  settings.service_ms = 50 * slower;
  settings.workers = 16;
  settings.duration_ms = 1500 * slower;
  const std::vector<GateSpec> gates = {parse_gate("bounded:6"), parse_gate("admission:100")};
  const std::vector<double> loads = {2};
  const auto live = overload_live(gates, loads, settings);
  const auto simulated = overload_virtual(gates, loads, settings);
  REQUIRE(live.size() == 2);
  for (std::size_t i = 0; i < live.size(); ++i) {
    CHECK(live[i].offered == simulated[i].offered);  // the same seeded arrivals
    CHECK(live[i].model_errors == 0);
    CHECK(live[i].offered == live[i].served + live[i].degraded + live[i].never_accepted);
  }
  const auto agreement = compare_overload(live, simulated, 50);
  for (const auto& d : agreement.disagreements) UNSCOPED_INFO(d);
  CHECK(agreement.disagreements.empty());
}

TEST_CASE("comparing overload rows flags coverage, achieved load and latency beyond the tolerance",
          "[experiments][live]") {
  OverloadRow sim;
  sim.gate = "bounded:6";
  sim.load = 2;
  sim.offered_per_sec = 80;
  sim.achieved_per_sec = 80;
  sim.coverage = 0.5;
  sim.p50_ms = 100;
  sim.p95_ms = 200;
  OverloadRow live = sim;
  live.coverage = 0.54;
  live.p95_ms = 240;
  CHECK(compare_overload(std::vector{live}, std::vector{sim}, 10).disagreements.empty());
  live.coverage = 0.7;
  live.achieved_per_sec = 60;
  live.p95_ms = 300;
  const auto bad = compare_overload(std::vector{live}, std::vector{sim}, 10);
  REQUIRE(bad.disagreements.size() == 3);
  CHECK(bad.disagreements[0] == "bounded:6 at 2x: coverage 0.700 live, 0.500 simulated");
  CHECK(bad.disagreements[1] == "bounded:6 at 2x: achieved 60.0/s live, 80.0/s simulated");
  CHECK(bad.disagreements[2] == "bounded:6 at 2x: p95 300.0 ms live, 200.0 ms simulated");
}
