#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <vector>

#include <boost/json.hpp>

#include "llmchaos/experiments/replay.hpp"
#include "llmchaos/experiments/replay_report.hpp"
#include "llmchaos/experiments/synth.hpp"

using namespace llmchaos::experiments;

namespace {
// Four requests worked by hand for T = 3 s (see each test).
//   r0: primary fast and fine        r1: primary slow (4 s) but fine
//   r2: primary fails, retry fails   r3: primary fine, both backups would fail
std::vector<TraceRow> hand_trace() {
  return {
      {{1.0, true}, {1.5, true}, {2.0, true}},
      {{4.0, true}, {1.0, true}, {2.0, true}},
      {{0.5, false}, {1.2, false}, {2.5, true}},
      {{2.0, true}, {30.0, false}, {1.0, false}},
  };
}
}  // namespace

TEST_CASE("wait takes the first primary attempt as it was", "[experiments][replay]") {
  const auto s = evaluate(hand_trace(), {ReplayPolicy::wait, 0});
  CHECK(s.requests == 4);
  CHECK(s.successes == 3);
  CHECK(s.success_rate == 0.75);
  // successful latencies 1, 2, 4
  CHECK(s.p50 == 2);
  CHECK(s.p95 == Approx(3.8));   // h = 1.9
  CHECK(s.p99 == Approx(3.96));  // h = 1.98
  CHECK(s.max == 4);
  CHECK(s.extra_calls == 0);
  CHECK(s.extra_call_pct == 0);
}

TEST_CASE("retry after T makes a second primary attempt at T for slow or failed requests", "[experiments][replay]") {
  // r0 1.0 ok; r1 3 + 1.0 = 4.0 ok (extra); r2 3 + 1.2 failed (extra); r3 2.0 ok
  const auto s = evaluate(hand_trace(), {ReplayPolicy::retry, 3});
  CHECK(s.successes == 3);
  CHECK(s.success_rate == 0.75);
  CHECK(s.p50 == 2);
  CHECK(s.max == 4);
  CHECK(s.extra_calls == 2);
  CHECK(s.extra_call_pct == 50);
}

TEST_CASE("switch after T goes to the alternate at T and can rescue a failed primary", "[experiments][replay]") {
  // r0 1.0; r1 3 + 2.0 = 5.0; r2 3 + 2.5 = 5.5; r3 2.0: successful 1, 2, 5, 5.5
  const auto s = evaluate(hand_trace(), {ReplayPolicy::switch_route, 3});
  CHECK(s.successes == 4);
  CHECK(s.success_rate == 1.0);
  CHECK(s.p50 == 3.5);              // h = 1.5
  CHECK(s.p95 == Approx(5.425));    // h = 2.85
  CHECK(s.p99 == Approx(5.485));    // h = 2.97
  CHECK(s.max == 5.5);
  CHECK(s.extra_calls == 2);
}

TEST_CASE("an attempt that took exactly T is in time, a hair more is not", "[experiments][replay]") {
  const TraceRow row{{3.0, true}, {1.0, true}, {1.0, true}};
  const auto on_time = play(row, {ReplayPolicy::retry, 3.0});
  CHECK(on_time.ok);
  CHECK(on_time.latency_sec == 3.0);
  CHECK(on_time.extra_calls == 0);
  const auto late = play(row, {ReplayPolicy::retry, 2.999});
  CHECK(late.latency_sec == Approx(3.999));
  CHECK(late.extra_calls == 1);
}

TEST_CASE("no successful request gives NaN latency figures and a zero success rate", "[experiments][replay]") {
  const std::vector<TraceRow> trace = {{{1, false}, {1, false}, {1, false}}};
  const auto s = evaluate(trace, {ReplayPolicy::retry, 0.5});
  CHECK(s.success_rate == 0);
  CHECK(std::isnan(s.p50));
  CHECK(std::isnan(s.max));
  CHECK(s.extra_call_pct == 100);
  const auto empty = evaluate(std::vector<TraceRow>{}, {ReplayPolicy::wait, 0});
  CHECK(empty.requests == 0);
  CHECK(empty.success_rate == 0);
}

TEST_CASE("the configurations are wait once, then retry and switch per T in order", "[experiments][replay]") {
  const std::vector<double> ts = {2.5, 3};
  const auto c = policy_configs(ts);
  REQUIRE(c.size() == 5);
  CHECK(c[0].policy == ReplayPolicy::wait);
  CHECK(c[1] == PolicyConfig{ReplayPolicy::retry, 2.5});
  CHECK(c[2] == PolicyConfig{ReplayPolicy::retry, 3});
  CHECK(c[3] == PolicyConfig{ReplayPolicy::switch_route, 2.5});
  CHECK(c[4] == PolicyConfig{ReplayPolicy::switch_route, 3});
  CHECK(parse_policy("switch") == ReplayPolicy::switch_route);
  CHECK(policy_name(ReplayPolicy::retry) == "retry");
  CHECK_FALSE(parse_policy("hedge").has_value());
}

TEST_CASE("summarizing per-request outcomes gives the same figures as evaluating the trace", "[experiments][replay]") {
  const auto trace = hand_trace();
  for (const auto& config : policy_configs(std::vector<double>{0.7, 3})) {
    std::vector<RequestOutcome> outcomes;
    for (const auto& row : trace) outcomes.push_back(play(row, config));
    const auto a = summarize(config, outcomes);
    const auto b = evaluate(trace, config);
    CHECK(a.successes == b.successes);
    CHECK(a.extra_calls == b.extra_calls);
    CHECK(a.p95 == b.p95);
    CHECK(a.max == b.max);
    CHECK(evaluate_all(trace, std::vector<PolicyConfig>{config})[0].p99 == b.p99);
  }
}

// The study's expected shape (SPEC 8) on a synthetic trace: primary p95 ~ 2.8 s, p99 ~ 3.2 s.
TEST_CASE("a T below the primary's p95 slows the tail and a T above p99 costs under 1% extra calls",
          "[experiments][replay]") {
  SynthOptions options;
  options.rows = 20000;
  options.seed = 5;
  const auto trace = synth_trace(options);
  const auto wait = evaluate(trace, {ReplayPolicy::wait, 0});
  const auto early = evaluate(trace, {ReplayPolicy::retry, 2.5});
  const auto late = evaluate(trace, {ReplayPolicy::retry, 3.5});
  CHECK(early.p95 > wait.p95);
  CHECK(early.extra_call_pct > 5);
  CHECK(late.extra_call_pct < 1);
  CHECK(late.p50 == Approx(wait.p50).margin(0.01));
}

TEST_CASE("only switching rescues an outage of the primary", "[experiments][replay]") {
  SynthOptions options;
  options.rows = 10000;
  options.seed = 6;
  options.outage = std::pair<std::size_t, std::size_t>{2000, 3000};  // 10% of the requests
  const auto trace = synth_trace(options);
  const auto wait = evaluate(trace, {ReplayPolicy::wait, 0});
  const auto retry = evaluate(trace, {ReplayPolicy::retry, 3.5});
  const auto sw = evaluate(trace, {ReplayPolicy::switch_route, 3.5});
  CHECK(wait.success_rate < 0.91);
  CHECK(retry.success_rate < 0.91);
  CHECK(sw.success_rate > 0.98);
}

TEST_CASE("the text, JSON and Markdown reports carry every row's figures", "[experiments][replay][report]") {
  ReplayReport report;
  report.trace = "hand.jsonl";
  report.requests = 4;
  const auto configs = policy_configs(std::vector<double>{3});
  report.rows = evaluate_all(hand_trace(), configs);
  REQUIRE(replay_formats().size() == 3);

  std::ostringstream text;
  find_replay_format("text")->write(report, text);
  CHECK(text.str().find("switch") != std::string::npos);
  CHECK(text.str().find("5.485") != std::string::npos);
  CHECK(text.str().find("numpy") != std::string::npos);

  std::ostringstream md;
  find_replay_format("markdown")->write(report, md);
  CHECK(md.str().find("| switch | 3 | 4 | 100.00% | 3.500 | 5.425 | 5.485 | 5.500 | 50.00% |") != std::string::npos);

  std::ostringstream js;
  find_replay_format("json")->write(report, js);
  const auto doc = boost::json::parse(js.str()).as_object();
  const auto& rows = doc.at("rows").as_array();
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].at("timeout_sec").is_null());
  CHECK(rows[2].at("policy").as_string() == "switch");
  CHECK(rows[2].at("p95_sec").as_double() == report.rows[2].p95);
  CHECK(rows[1].at("extra_call_pct").as_double() == 50);
  CHECK(find_replay_format("html") == nullptr);
}

TEST_CASE("the CDF SVG is self-contained with one curve and one T marker per configuration", "[experiments][replay][report]") {
  const auto trace = hand_trace();
  std::vector<CdfCurve> curves;
  for (const double t : {2.0, 3.0}) curves.push_back({{ReplayPolicy::retry, t}, successful_latencies(trace, {ReplayPolicy::retry, t})});
  const auto svg = replay_cdf_svg(ReplayPolicy::retry, curves, trace.size());
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(svg.find("href") == std::string::npos);
  auto count = [&](std::string_view needle) {
    std::size_t n = 0;
    for (auto pos = svg.find(needle); pos != std::string::npos; pos = svg.find(needle, pos + 1)) ++n;
    return n;
  };
  CHECK(count("<polyline") == 2);
  CHECK(count("stroke-dasharray") == 2);
  CHECK(svg.find("T = 3 s") != std::string::npos);
}
