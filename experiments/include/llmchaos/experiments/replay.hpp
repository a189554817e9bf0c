#pragma once
// Timeout-policy replay (SPEC 8), offline: what would wait / retry-after-T / switch-after-T have given
// over one recorded trace? Pure functions of the trace.
//
//   wait          the first primary attempt as it was: latency primary_1.sec, outcome primary_1.ok.
//   retry after T if primary_1 is not ok or took longer than T, a second primary attempt is made at T:
//                 latency T + primary_2.sec, outcome primary_2.ok, one extra call.
//   switch after T the same with the alternate route instead of primary_2.
// A failed first attempt is acted on at T, not earlier: the trace's failures are treated as detected by
// the timeout (the conservative reading; the live replay plays them the same way). Only successful
// requests count in the latency figures.
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/experiments/stats.hpp"
#include "llmchaos/experiments/trace.hpp"

namespace llmchaos::experiments {

enum class ReplayPolicy { wait, retry, switch_route };

// "wait", "retry", "switch"
std::string_view policy_name(ReplayPolicy policy);
std::optional<ReplayPolicy> parse_policy(std::string_view name);

struct PolicyConfig {
  ReplayPolicy policy = ReplayPolicy::wait;
  double timeout_sec = 0;  // T; unused by wait
  bool operator==(const PolicyConfig&) const = default;
};

// wait once, then retry and switch for each T (in the given order).
std::vector<PolicyConfig> policy_configs(std::span<const double> timeouts_sec);

// What one request gives under one policy.
struct RequestOutcome {
  bool ok = false;
  double latency_sec = 0;
  int extra_calls = 0;
};
RequestOutcome play(const TraceRow& row, const PolicyConfig& config);
// The second attempt that answers the request under `config` (primary_2 or alternate), or nullptr
// when the first one does (wait, or primary_1 ok within T). play() is defined by it.
const TraceAttempt* second_attempt(const TraceRow& row, const PolicyConfig& config);

struct ReplayStats {
  PolicyConfig config;
  std::size_t requests = 0;
  std::size_t successes = 0;
  std::size_t extra_calls = 0;
  double success_rate = 0;    // successes / requests (0 with no requests)
  double extra_call_pct = 0;  // 100 * extra_calls / requests
  // Of the successful latencies (numpy-default percentiles, see stats.hpp); NaN when none succeeded.
  double p50 = 0, p95 = 0, p99 = 0, max = 0;
};

// The figures from per-request outcomes (shared by the offline and the live replay).
ReplayStats summarize(const PolicyConfig& config, std::span<const RequestOutcome> outcomes);

// Every configuration in one pass over the rows, without a latency array per configuration: the
// successful primary_1 latencies are counted once (a configuration with timeout T takes those <= T,
// which are the smallest of its latencies), plus per configuration the seconds of the second
// attempts it made. Feed rows in any number of blocks, or parts on threads (one tally each, merged
// in any order), then read the figures; they equal evaluate() of each configuration bit for bit.
class ReplayTally {
 public:
  explicit ReplayTally(std::span<const PolicyConfig> configs);
  void add(std::span<const TraceRow> rows);
  void merge(const ReplayTally& other);  // a tally of the same configurations
  std::size_t requests() const { return requests_; }
  std::vector<ReplayStats> stats() const;

 private:
  std::vector<PolicyConfig> configs_;
  double first_in_time_ = 0;  // a successful primary_1 within this is in time under every configuration
  std::size_t requests_ = 0;
  LatencyCounts first_ok_;             // primary_1.sec of the requests whose primary_1 succeeded
  std::vector<LatencyCounts> second_;  // per configuration: .sec of its successful second attempts
};

ReplayStats evaluate(std::span<const TraceRow> trace, const PolicyConfig& config);
// threads = 0: the cores for a large trace (each thread tallies a slice of the rows), else 1.
std::vector<ReplayStats> evaluate_all(std::span<const TraceRow> trace, std::span<const PolicyConfig> configs,
                                      unsigned threads = 0);

// Reads and evaluates a trace file in one streaming pass: each parsing thread feeds its own tally
// and no row array is built (use read_trace_file + evaluate_all when the rows are needed too, e.g.
// for the SVG plots). `parse.rows` stays empty; errors and counts are those of read_trace_file, and
// `stats` counts the good rows only, as evaluate_all of the parsed rows would.
struct TraceReplay {
  TraceParse parse;
  std::size_t requests = 0;  // good rows
  std::vector<ReplayStats> stats;
};
TraceReplay replay_trace_file(const std::string& path, std::span<const PolicyConfig> configs,
                              const TraceParseOptions& options = {});

// Sorted latencies of the successful requests (for the CDF plots).
std::vector<double> successful_latencies(std::span<const TraceRow> trace, const PolicyConfig& config);

}  // namespace llmchaos::experiments
