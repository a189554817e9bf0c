#include "llmchaos/experiments/replay.hpp"

#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <stdexcept>
#include <thread>

#include "llmchaos/experiments/stats.hpp"

namespace llmchaos::experiments {

namespace {
constexpr std::array<std::pair<ReplayPolicy, std::string_view>, 3> policy_names = {
    {{ReplayPolicy::wait, "wait"}, {ReplayPolicy::retry, "retry"}, {ReplayPolicy::switch_route, "switch"}}};

// The figures of one configuration from its counts and its successful latencies, read in ascending
// order through at(rank) (a sorted array or the tally's counts: the same numbers either way).
ReplayStats stats_of(const PolicyConfig& config, std::size_t requests, std::size_t successes,
                     std::size_t extra_calls, const std::function<double(std::size_t)>& at) {
  ReplayStats s;
  s.config = config;
  s.requests = requests;
  s.successes = successes;
  s.extra_calls = extra_calls;
  if (requests > 0) {
    s.success_rate = static_cast<double>(successes) / static_cast<double>(requests);
    s.extra_call_pct = 100.0 * static_cast<double>(extra_calls) / static_cast<double>(requests);
  }
  constexpr std::array<double, 4> percents = {50, 95, 99, 100};
  const auto p = percentiles_by_rank(successes, percents, at);
  s.p50 = p[0];
  s.p95 = p[1];
  s.p99 = p[2];
  s.max = p[3];
  return s;
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

const TraceAttempt* second_attempt(const TraceRow& row, const PolicyConfig& config) {
  if (config.policy == ReplayPolicy::wait) return nullptr;
  if (row.primary_1.ok && row.primary_1.sec <= config.timeout_sec) return nullptr;
  return config.policy == ReplayPolicy::retry ? &row.primary_2 : &row.alternate;
}

RequestOutcome play(const TraceRow& row, const PolicyConfig& config) {
  if (const TraceAttempt* second = second_attempt(row, config))
    return {second->ok, config.timeout_sec + second->sec, 1};
  return {row.primary_1.ok, row.primary_1.sec, 0};
}

ReplayStats summarize(const PolicyConfig& config, std::span<const RequestOutcome> outcomes) {
  std::vector<double> latencies;
  std::size_t extra = 0;
  for (const auto& o : outcomes) {
    extra += static_cast<std::size_t>(o.extra_calls);
    if (o.ok) latencies.push_back(o.latency_sec);
  }
  std::sort(latencies.begin(), latencies.end());
  return stats_of(config, outcomes.size(), latencies.size(), extra,
                  [&](std::size_t rank) { return latencies[rank]; });
}

ReplayTally::ReplayTally(std::span<const PolicyConfig> configs)
    : configs_(configs.begin(), configs.end()),
      first_in_time_(std::numeric_limits<double>::infinity()),
      second_(configs.size()) {
  // The smallest T; a NaN T (under which nothing is in time) disables the shortcut in add().
  for (const auto& c : configs_)
    if (c.policy != ReplayPolicy::wait && !(c.timeout_sec >= first_in_time_)) first_in_time_ = c.timeout_sec;
}

void ReplayTally::add(std::span<const TraceRow> rows) {
  requests_ += rows.size();
  for (const TraceRow& row : rows) {
    const TraceAttempt& first = row.primary_1;
    if (first.ok) {
      first_ok_.add(first.sec);
      // In time under every T, so no configuration makes a second attempt: most rows end here.
      if (first.sec <= first_in_time_) continue;
    }
    for (std::size_t i = 0; i < configs_.size(); ++i)
      if (const TraceAttempt* second = second_attempt(row, configs_[i]); second != nullptr && second->ok)
        second_[i].add(second->sec);
  }
}

void ReplayTally::merge(const ReplayTally& other) {
  if (other.configs_ != configs_) throw std::invalid_argument("ReplayTally::merge: different configurations");
  requests_ += other.requests_;
  first_ok_.merge(other.first_ok_);
  for (std::size_t i = 0; i < second_.size(); ++i) second_[i].merge(other.second_[i]);
}

std::vector<ReplayStats> ReplayTally::stats() const {
  const SortedCounts firsts = first_ok_.sorted();
  std::vector<ReplayStats> out;
  for (std::size_t i = 0; i < configs_.size(); ++i) {
    const PolicyConfig& c = configs_[i];
    // A configuration's successful latencies in ascending order: its first attempts in time (the
    // smallest successful primary_1 latencies, all <= T), then T + each successful second attempt
    // (all >= T). Every request without a first attempt in time made one extra call.
    const bool wait = c.policy == ReplayPolicy::wait;
    const std::size_t in_time = wait ? firsts.size() : firsts.count_at_most(c.timeout_sec);
    const SortedCounts seconds = second_[i].sorted();
    out.push_back(stats_of(
        c, requests_, in_time + seconds.size(), wait ? 0 : requests_ - in_time, [&](std::size_t rank) {
          return rank < in_time ? firsts.at(rank) : c.timeout_sec + seconds.at(rank - in_time);
        }));
  }
  return out;
}

ReplayStats evaluate(std::span<const TraceRow> trace, const PolicyConfig& config) {
  return evaluate_all(trace, {&config, 1})[0];
}

std::vector<ReplayStats> evaluate_all(std::span<const TraceRow> trace, std::span<const PolicyConfig> configs,
                                      unsigned threads) {
  if (threads == 0)
    threads = trace.size() >= 100000 ? std::clamp(std::thread::hardware_concurrency(), 1u, 8u) : 1;
  // Thread k tallies the k-th slice of the rows; the tallies add up.
  std::vector<ReplayTally> tallies(std::max<std::size_t>(1, std::min<std::size_t>(threads, trace.size())),
                                   ReplayTally(configs));
  auto work = [&](std::size_t k) {
    const std::size_t n = trace.size(), parts = tallies.size();
    tallies[k].add(trace.subspan(n * k / parts, n * (k + 1) / parts - n * k / parts));
  };
  std::vector<std::thread> workers;
  for (std::size_t k = 1; k < tallies.size(); ++k) workers.emplace_back(work, k);
  work(0);
  for (auto& w : workers) w.join();
  for (std::size_t k = 1; k < tallies.size(); ++k) tallies[0].merge(tallies[k]);
  return tallies[0].stats();
}

TraceReplay replay_trace_file(const std::string& path, std::span<const PolicyConfig> configs,
                              const TraceParseOptions& options) {
  // One tally per parsing thread, fed straight from that thread's blocks of rows.
  std::vector<ReplayTally> tallies(trace_threads(options), ReplayTally(configs));
  std::vector<TraceRowSink> sinks;
  for (auto& tally : tallies)
    sinks.emplace_back([&tally](std::span<const TraceRow> rows) { tally.add(rows); });
  TraceReplay out;
  out.parse = scan_trace_file(path, sinks, options);
  for (std::size_t k = 1; k < tallies.size(); ++k) tallies[0].merge(tallies[k]);
  out.requests = tallies[0].requests();
  out.stats = tallies[0].stats();
  return out;
}

std::vector<double> successful_latencies(std::span<const TraceRow> trace, const PolicyConfig& config) {
  std::vector<double> latencies;
  for (const TraceRow& row : trace)
    if (const RequestOutcome o = play(row, config); o.ok) latencies.push_back(o.latency_sec);
  std::sort(latencies.begin(), latencies.end());
  return latencies;
}

}  // namespace llmchaos::experiments
