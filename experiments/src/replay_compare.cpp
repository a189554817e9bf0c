// compare_live: the pure half of the live replay (tested on hand-made outcomes).
#include <fmt/format.h>

#include <cmath>

#include "llmchaos/experiments/replay_live.hpp"

namespace llmchaos::experiments {

LiveAgreement compare_live(std::span<const TraceRow> trace, std::span<const PolicyConfig> configs,
                           const LiveReplayResult& live, const LiveReplayOptions& options) {
  constexpr std::size_t max_messages = 20;
  constexpr double relative = 0.02;
  const double guard = options.jitter_ms / 1000.0 / options.time_scale;
  LiveAgreement out;
  out.tolerance = fmt::format(
      "per request: same outcome and extra calls, latency within {:.3f} s + 2%; requests whose primary_1 "
      "latency "
      "is within {:.3f} s of T are not compared; the mock's ledger holds one attempt per request plus the "
      "extra calls",
      guard, guard);
  std::size_t count = 0;
  auto note = [&](std::string message) {
    if (++count <= max_messages) out.disagreements.push_back(std::move(message));
  };
  if (live.outcomes.size() != configs.size()) {
    note(fmt::format("live run has {} configurations, expected {}", live.outcomes.size(), configs.size()));
    return out;
  }
  for (std::size_t c = 0; c < configs.size(); ++c) {
    const PolicyConfig& config = configs[c];
    const std::string name = config.policy == ReplayPolicy::wait
                                 ? std::string("wait")
                                 : fmt::format("{} T={:g}", policy_name(config.policy), config.timeout_sec);
    if (live.outcomes[c].size() != trace.size()) {
      note(fmt::format("{}: live run has {} requests, expected {}", name, live.outcomes[c].size(),
                       trace.size()));
      continue;
    }
    for (std::size_t i = 0; i < trace.size(); ++i) {
      const TraceRow& row = trace[i];
      if (config.policy != ReplayPolicy::wait && std::abs(row.primary_1.sec - config.timeout_sec) <= guard)
        continue;
      const RequestOutcome want = play(row, config);
      const RequestOutcome& got = live.outcomes[c][i];
      if (want.ok != got.ok || want.extra_calls != got.extra_calls) {
        note(fmt::format("{} request {}: offline {} with {} extra call(s), live {} with {}", name, i,
                         want.ok ? "ok" : "failed", want.extra_calls, got.ok ? "ok" : "failed",
                         got.extra_calls));
      } else if (want.ok &&
                 std::abs(got.latency_sec - want.latency_sec) > guard + relative * want.latency_sec) {
        note(fmt::format("{} request {}: offline {:.3f} s, live {:.3f} s", name, i, want.latency_sec,
                         got.latency_sec));
      }
    }
  }
  std::size_t expected_attempts = 0;
  for (const auto& per_config : live.outcomes)
    for (const auto& o : per_config) expected_attempts += 1 + static_cast<std::size_t>(o.extra_calls);
  if (live.mock_attempts != expected_attempts)
    note(fmt::format("the mock saw {} attempts, the client reports {} (one per request plus extra calls)",
                     live.mock_attempts, expected_attempts));
  if (count > max_messages) out.disagreements.push_back(fmt::format("... and {} more", count - max_messages));
  return out;
}

}  // namespace llmchaos::experiments
