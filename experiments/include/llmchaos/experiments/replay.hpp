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
#include <string_view>
#include <vector>

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

ReplayStats evaluate(std::span<const TraceRow> trace, const PolicyConfig& config);
// threads = 0: the cores for a large trace (each configuration is evaluated on one thread), else 1.
std::vector<ReplayStats> evaluate_all(std::span<const TraceRow> trace, std::span<const PolicyConfig> configs,
                                      unsigned threads = 0);

// Sorted latencies of the successful requests (for the CDF plots).
std::vector<double> successful_latencies(std::span<const TraceRow> trace, const PolicyConfig& config);

}  // namespace llmchaos::experiments
