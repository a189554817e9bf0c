#pragma once
// Retry backoff: exponential with full jitter (AWS style: uniform in [0, min(cap, base * 2^n)]) drawn
// from the injected Rng, so a seed reproduces every delay. A provider's retry-after (parsed once, by
// the classifier: retry_after_from_headers) wins when it is longer; it is never capped, because the
// decision already checked that it fits the time budget.
#include <optional>

#include "llmchaos/client/policy.hpp"
#include "llmchaos/core/rng.hpp"

namespace llmchaos::client {

struct BackoffDelay {
  double ms = 0;                 // what to sleep before the retry
  double jitter_ms = 0;          // the full-jitter draw
  bool retry_after_won = false;  // the provider's retry-after was longer than the draw
};

class Backoff {
 public:
  explicit Backoff(BackoffSettings settings) : settings_(settings) {}

  // Upper bound of the draw before retry number `retry_index` (0 = first retry): min(cap, base * 2^n).
  double ceiling_ms(int retry_index) const;
  // The delay before retry number `retry_index`: one draw from `rng`, then max with `retry_after_ms`.
  BackoffDelay delay(int retry_index, Rng& rng, std::optional<double> retry_after_ms = std::nullopt) const;
  const BackoffSettings& settings() const { return settings_; }

 private:
  BackoffSettings settings_;
};

}  // namespace llmchaos::client
