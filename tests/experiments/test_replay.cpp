#include <unistd.h>

#include <algorithm>
#include <bit>
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

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

TEST_CASE("retry after T makes a second primary attempt at T for slow or failed requests",
          "[experiments][replay]") {
  // r0 1.0 ok; r1 3 + 1.0 = 4.0 ok (extra); r2 3 + 1.2 failed (extra); r3 2.0 ok
  const auto s = evaluate(hand_trace(), {ReplayPolicy::retry, 3});
  CHECK(s.successes == 3);
  CHECK(s.success_rate == 0.75);
  CHECK(s.p50 == 2);
  CHECK(s.max == 4);
  CHECK(s.extra_calls == 2);
  CHECK(s.extra_call_pct == 50);
}

TEST_CASE("switch after T goes to the alternate at T and can rescue a failed primary",
          "[experiments][replay]") {
  // r0 1.0; r1 3 + 2.0 = 5.0; r2 3 + 2.5 = 5.5; r3 2.0: successful 1, 2, 5, 5.5
  const auto s = evaluate(hand_trace(), {ReplayPolicy::switch_route, 3});
  CHECK(s.successes == 4);
  CHECK(s.success_rate == 1.0);
  CHECK(s.p50 == 3.5);            // h = 1.5
  CHECK(s.p95 == Approx(5.425));  // h = 2.85
  CHECK(s.p99 == Approx(5.485));  // h = 2.97
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

TEST_CASE("no successful request gives NaN latency figures and a zero success rate",
          "[experiments][replay]") {
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

TEST_CASE("summarizing per-request outcomes gives the same figures as evaluating the trace",
          "[experiments][replay]") {
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

namespace {
// The definition, the slow way: play every row under the configuration, sort the successful latencies.
ReplayStats reference(std::span<const TraceRow> trace, const PolicyConfig& config) {
  std::vector<RequestOutcome> outcomes;
  for (const auto& row : trace) outcomes.push_back(play(row, config));
  return summarize(config, outcomes);
}

bool same_bits(double a, double b) {
  return std::bit_cast<std::uint64_t>(a) == std::bit_cast<std::uint64_t>(b);
}

void check_same(const ReplayStats& a, const ReplayStats& b) {
  INFO(policy_name(a.config.policy) << " T=" << a.config.timeout_sec);
  CHECK(a.config == b.config);
  CHECK(a.requests == b.requests);
  CHECK(a.successes == b.successes);
  CHECK(a.extra_calls == b.extra_calls);
  CHECK(same_bits(a.success_rate, b.success_rate));
  CHECK(same_bits(a.extra_call_pct, b.extra_call_pct));
  CHECK(same_bits(a.p50, b.p50));
  CHECK(same_bits(a.p95, b.p95));
  CHECK(same_bits(a.p99, b.p99));
  CHECK(same_bits(a.max, b.max));
}

// A synthetic trace whose seconds are not all whole milliseconds (every 7th row gets 6 decimals,
// every 11th full precision, every 13th an attempt of exactly 3 s), so the tally's exact-count path
// and its kept-as-is path both take part.
std::vector<TraceRow> mixed_trace(std::size_t rows, std::uint64_t seed) {
  SynthOptions options;
  options.rows = rows;
  options.seed = seed;
  options.outage = std::pair<std::size_t, std::size_t>{rows / 3, rows / 3 + rows / 50};
  auto trace = synth_trace(options);
  for (std::size_t i = 0; i < trace.size(); ++i) {
    for (auto* a : {&trace[i].primary_1, &trace[i].primary_2, &trace[i].alternate}) {
      a->sec = i % 11 == 0  ? a->sec
               : i % 7 == 0 ? std::round(a->sec * 1e6) / 1e6
                            : std::round(a->sec * 1e3) / 1e3;
      if (i % 13 == 0) a->sec = 3.0;
    }
  }
  return trace;
}
}  // namespace

TEST_CASE("one tally of every configuration equals playing each configuration and sorting, bit for bit",
          "[experiments][replay]") {
  const auto trace = mixed_trace(30000, 21);
  // T on a whole millisecond, off it, equal to recorded latencies (3 s), below and above everything.
  const auto configs = policy_configs(std::vector<double>{2.5, 2.5005, 3, 0.05, 1000});
  for (const unsigned threads : {1u, 2u, 3u}) {
    const auto got = evaluate_all(trace, configs, threads);
    REQUIRE(got.size() == configs.size());
    for (std::size_t i = 0; i < configs.size(); ++i) check_same(got[i], reference(trace, configs[i]));
  }
  // Fed in uneven blocks, and from two tallies merged: the same.
  ReplayTally a(configs), b(configs);
  const std::span<const TraceRow> all(trace);
  std::size_t at = 0;
  for (std::size_t block = 1; at < all.size(); block = block * 3 + 1) {
    const std::size_t n = std::min(block, all.size() - at);
    (at < all.size() / 2 ? a : b).add(all.subspan(at, n));
    at += n;
  }
  a.merge(b);
  CHECK(a.requests() == trace.size());
  const auto merged = a.stats();
  for (std::size_t i = 0; i < configs.size(); ++i) check_same(merged[i], reference(trace, configs[i]));
  CHECK_THROWS(a.merge(ReplayTally(policy_configs(std::vector<double>{1}))));
}

TEST_CASE("a tally of only failures or of nothing gives NaN latencies like the definition",
          "[experiments][replay]") {
  const std::vector<TraceRow> failures = {{{1, false}, {1, false}, {1, false}},
                                          {{9, false}, {2, false}, {0, false}}};
  const auto configs = policy_configs(std::vector<double>{0.5, 3});
  const auto got = evaluate_all(failures, configs);
  for (std::size_t i = 0; i < configs.size(); ++i) check_same(got[i], reference(failures, configs[i]));
  const auto none = ReplayTally(configs).stats();
  for (const auto& s : none) {
    CHECK(s.requests == 0);
    CHECK(std::isnan(s.p50));
  }
}

TEST_CASE("the streaming file replay equals reading the rows and evaluating them, errors included",
          "[experiments][replay]") {
  const auto dir =
      std::filesystem::temp_directory_path() / ("llmchaos-replay-stream-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto rows = mixed_trace(90000, 22);  // ~10 MB of JSON lines: three parts on three threads
  std::ostringstream jsonl, csv;
  write_trace_jsonl(rows, jsonl);
  write_trace_csv(rows, csv);
  std::string text = jsonl.str();
  // Bad lines at the start, the middle and the end; good lines off the fast path with 6 decimals.
  text.insert(0, "{\"primary_1\": 1}\n");
  text.insert(text.find('\n', text.size() / 2) + 1,
              "{\"alternate\":{\"ok\":true,\"sec\":0.123456},\"primary_2\":{\"sec\":1,\"ok\":true},"
              "\"primary_1\":{\"sec\":2.999999,\"ok\":true}}\nnot json\n");
  text +=
      "{\"primary_1\":{\"sec\":3.0000001,\"ok\":true},\"primary_2\":{\"sec\":1,\"ok\":true},\"alternate\":{"
      "\"sec\":1,\"ok\":false}}\n{\n";
  const auto configs = policy_configs(std::vector<double>{2.5, 3, 3.5});
  for (const auto& [name, content] : {std::pair{"t.jsonl", text}, std::pair{"t.csv", csv.str()}}) {
    const auto path = (dir / name).string();
    std::ofstream(path, std::ios::binary) << content;
    TraceParseOptions options;
    options.threads = 3;
    options.max_errors = 2;
    const auto read = parse_trace(content, path, options);  // in memory: the reference
    const auto streamed = replay_trace_file(path, configs, options);
    INFO(path);
    CHECK(streamed.parse.rows.empty());
    CHECK(streamed.requests == read.rows.size());
    CHECK(streamed.parse.lines == read.lines);
    CHECK(streamed.parse.error_count == read.error_count);
    REQUIRE(streamed.parse.errors.size() == read.errors.size());
    for (std::size_t i = 0; i < read.errors.size(); ++i)
      CHECK(streamed.parse.errors[i].str() == read.errors[i].str());
    const auto expected = evaluate_all(read.rows, configs);
    REQUIRE(streamed.stats.size() == expected.size());
    for (std::size_t i = 0; i < expected.size(); ++i) {
      check_same(streamed.stats[i], expected[i]);
      check_same(streamed.stats[i], reference(read.rows, configs[i]));
    }
  }
  CHECK(replay_trace_file((dir / "t.jsonl").string(), configs).parse.error_count == 3);
  CHECK_THROWS(replay_trace_file((dir / "missing.jsonl").string(), configs));
  std::filesystem::remove_all(dir);
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
  CHECK(md.str().find("| switch | 3 | 4 | 100.00% | 3.500 | 5.425 | 5.485 | 5.500 | 50.00% |") !=
        std::string::npos);

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

TEST_CASE("the CDF SVG is self-contained with one curve and one T marker per configuration",
          "[experiments][replay][report]") {
  const auto trace = hand_trace();
  std::vector<CdfCurve> curves;
  for (const double t : {2.0, 3.0})
    curves.push_back({{ReplayPolicy::retry, t}, successful_latencies(trace, {ReplayPolicy::retry, t})});
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
