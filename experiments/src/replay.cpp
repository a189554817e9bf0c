#include "llmchaos/experiments/replay.hpp"

#include <algorithm>
#include <array>
#include <limits>
#include <thread>

#include "llmchaos/experiments/stats.hpp"

namespace llmchaos::experiments {

namespace {
constexpr std::array<std::pair<ReplayPolicy, std::string_view>, 3> policy_names = {
    {{ReplayPolicy::wait, "wait"}, {ReplayPolicy::retry, "retry"}, {ReplayPolicy::switch_route, "switch"}}};

ReplayStats stats_from(const PolicyConfig& config, std::size_t requests, std::size_t extra_calls,
                       std::vector<double>& latencies) {
  ReplayStats s;
  s.config = config;
  s.requests = requests;
  s.successes = latencies.size();
  s.extra_calls = extra_calls;
  if (requests > 0) {
    s.success_rate = static_cast<double>(s.successes) / static_cast<double>(requests);
    s.extra_call_pct = 100.0 * static_cast<double>(extra_calls) / static_cast<double>(requests);
  }
  constexpr std::array<double, 4> percents = {50, 95, 99, 100};
  const auto p = percentiles(latencies, percents);
  s.p50 = p[0];
  s.p95 = p[1];
  s.p99 = p[2];
  s.max = p[3];
  return s;
}

// One pass over the trace: successful latencies into `latencies`, extra calls counted.
std::size_t collect(std::span<const TraceRow> trace, const PolicyConfig& config, std::vector<double>& latencies) {
  latencies.clear();
  latencies.reserve(trace.size());
  std::size_t extra = 0;
  for (const TraceRow& row : trace) {
    const RequestOutcome o = play(row, config);
    extra += static_cast<std::size_t>(o.extra_calls);
    if (o.ok) latencies.push_back(o.latency_sec);
  }
  return extra;
}
}  // namespace

std::string_view policy_name(ReplayPolicy policy) {
  for (const auto& [p, name] : policy_names)
    if (p == policy) return name;
  return "?";
}

std::optional<ReplayPolicy> parse_policy(std::string_view name) {
  for (const auto& [p, n] : policy_names)
    if (n == name) return p;
  return std::nullopt;
}

std::vector<PolicyConfig> policy_configs(std::span<const double> timeouts_sec) {
  std::vector<PolicyConfig> out{{ReplayPolicy::wait, 0}};
  for (const ReplayPolicy p : {ReplayPolicy::retry, ReplayPolicy::switch_route})
    for (const double t : timeouts_sec) out.push_back({p, t});
  return out;
}

RequestOutcome play(const TraceRow& row, const PolicyConfig& config) {
  const TraceAttempt& first = row.primary_1;
  if (config.policy == ReplayPolicy::wait) return {first.ok, first.sec, 0};
  if (first.ok && first.sec <= config.timeout_sec) return {true, first.sec, 0};
  const TraceAttempt& second = config.policy == ReplayPolicy::retry ? row.primary_2 : row.alternate;
  return {second.ok, config.timeout_sec + second.sec, 1};
}

ReplayStats summarize(const PolicyConfig& config, std::span<const RequestOutcome> outcomes) {
  std::vector<double> latencies;
  std::size_t extra = 0;
  for (const auto& o : outcomes) {
    extra += static_cast<std::size_t>(o.extra_calls);
    if (o.ok) latencies.push_back(o.latency_sec);
  }
  return stats_from(config, outcomes.size(), extra, latencies);
}

ReplayStats evaluate(std::span<const TraceRow> trace, const PolicyConfig& config) {
  std::vector<double> latencies;
  const std::size_t extra = collect(trace, config, latencies);
  return stats_from(config, trace.size(), extra, latencies);
}

std::vector<ReplayStats> evaluate_all(std::span<const TraceRow> trace, std::span<const PolicyConfig> configs,
                                      unsigned threads) {
  std::vector<ReplayStats> out(configs.size());
  // Configurations are independent: thread k takes every k-th one, with its own latency buffer.
  auto work = [&](std::size_t first, std::size_t step) {
    std::vector<double> latencies;
    for (std::size_t i = first; i < configs.size(); i += step) {
      const std::size_t extra = collect(trace, configs[i], latencies);
      out[i] = stats_from(configs[i], trace.size(), extra, latencies);
    }
  };
  if (threads == 0) threads = trace.size() >= 100000 ? std::min(8u, std::thread::hardware_concurrency()) : 1;
  threads = static_cast<unsigned>(std::clamp<std::size_t>(threads, 1, std::max<std::size_t>(1, configs.size())));
  std::vector<std::thread> workers;
  for (unsigned k = 1; k < threads; ++k) workers.emplace_back(work, k, threads);
  work(0, threads);
  for (auto& w : workers) w.join();
  return out;
}

std::vector<double> successful_latencies(std::span<const TraceRow> trace, const PolicyConfig& config) {
  std::vector<double> latencies;
  collect(trace, config, latencies);
  std::sort(latencies.begin(), latencies.end());
  return latencies;
}

}  // namespace llmchaos::experiments
