#include "llmchaos/experiments/synth.hpp"

#include <cmath>
#include <numbers>

#include "llmchaos/core/rng.hpp"

namespace llmchaos::experiments {

namespace {
// Standard normal by Box-Muller (one of the pair; simple and platform-independent with our Rng).
double standard_normal(Rng& rng) {
  const double u1 = 1.0 - rng.uniform();  // (0, 1]: log is finite
  const double u2 = rng.uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2);
}

TraceAttempt failure(Rng& rng, const SynthOptions& o) {
  if (rng.uniform() < o.hang_share) return {o.hang_sec, false};
  return {0.2 + 0.8 * rng.uniform(), false};
}

TraceAttempt attempt(Rng& rng, const RouteModel& route, const SynthOptions& o) {
  // Draw every number whether or not it is used, so the outage window does not shift later rows.
  const double latency = route.median_sec * std::exp(route.sigma * standard_normal(rng));
  const bool fails = rng.uniform() < route.failure_rate;
  const TraceAttempt failed = failure(rng, o);
  return fails ? failed : TraceAttempt{latency, true};
}
}  // namespace

std::vector<TraceRow> synth_trace(const SynthOptions& options) {
  Rng rng(options.seed);
  std::vector<TraceRow> rows;
  rows.reserve(options.rows);
  for (std::size_t i = 0; i < options.rows; ++i) {
    TraceRow row;
    row.primary_1 = attempt(rng, options.primary, options);
    row.primary_2 = attempt(rng, options.primary, options);
    row.alternate = attempt(rng, options.alternate, options);
    if (options.outage && i >= options.outage->first && i < options.outage->second) {
      row.primary_1 = {options.hang_sec, false};
      row.primary_2 = {options.hang_sec, false};
    }
    rows.push_back(row);
  }
  return rows;
}

}  // namespace llmchaos::experiments
