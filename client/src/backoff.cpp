#include "llmchaos/client/backoff.hpp"

#include <algorithm>
#include <cmath>

namespace llmchaos::client {

double Backoff::ceiling_ms(int retry_index) const {
  // 2^n overflows to infinity long after the cap binds; min() keeps it finite.
  const double exp = settings_.base_ms * std::ldexp(1.0, std::clamp(retry_index, 0, 1000));
  return std::min(settings_.cap_ms, exp);
}

BackoffDelay Backoff::delay(int retry_index, Rng& rng, std::optional<double> retry_after_ms) const {
  BackoffDelay d;
  d.jitter_ms = rng.uniform() * ceiling_ms(retry_index);
  d.ms = d.jitter_ms;
  if (retry_after_ms && *retry_after_ms > d.jitter_ms) {
    d.ms = *retry_after_ms;
    d.retry_after_won = true;
  }
  return d;
}

}  // namespace llmchaos::client
