#pragma once
// Synthetic latency traces for demos and benchmarks: lognormal latencies per route, rare failures and
// an optional outage window of the primary. Seeded: the same options give the same trace everywhere.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "llmchaos/experiments/trace.hpp"

namespace llmchaos::experiments {

struct RouteModel {
  double median_sec = 2.0;  // lognormal: median exp(mu)
  double sigma = 0.2;       // lognormal shape (log-space standard deviation)
  double failure_rate = 0.005;
};

struct SynthOptions {
  std::size_t rows = 1000;
  std::uint64_t seed = 1;
  RouteModel primary{2.0, 0.2, 0.005};  // p95 ~ 2.8 s, p99 ~ 3.2 s
  RouteModel alternate{3.0, 0.25, 0.005};
  // Requests [first, last) fall in an outage of the primary: both primary attempts fail (hang).
  std::optional<std::pair<std::size_t, std::size_t>> outage;
  // A failure is either a quick error (uniform 0.2..1 s) or, with this probability, a hang that the
  // recording client cut at hang_sec.
  double hang_share = 0.5;
  double hang_sec = 30.0;
};

std::vector<TraceRow> synth_trace(const SynthOptions& options);

}  // namespace llmchaos::experiments
