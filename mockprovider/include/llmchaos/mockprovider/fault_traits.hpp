#pragma once
// What a fault kind says of itself to the other layers (the harness's checker and action derivation,
// `llmchaos explore`): plain data, declared in the fault's own file (faults/<name>.cpp) and read through
// fault_traits(). Light on purpose: core types and the Rng, no Beast/Asio, no dialect or plan types,
// so any harness file may include it. (harness/src/spec_model.cpp reads none of it: it is the
// independent oracle.)
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmchaos/core/rng.hpp"
#include "llmchaos/core/types.hpp"

namespace llmchaos::mock {

// Whether an attempt answered with a 2xx status still failed, as the client sees it.
enum class InBand : std::uint8_t {
  never,                  // a 2xx of this fault is a whole answer
  always,                 // the stream breaks or nothing comes back: a failure whatever the status says
  under_output_contract,  // a failure only when the workflow requires output fields (schema_missing)
};

// The explore generator's draw of a fault's own step keys: seeded, plain data in and out.
struct ExploreDraw {
  Rng& rng;
  double timeout_ms = 0;  // the attempt timeout: delays are drawn inside it or past it
  int tokens = 0;         // content events of the route's answer
  bool contract = false;  // the workflow requires output fields
  std::vector<std::pair<std::string, double>>& params;
  std::string& missing_field;

  bool maybe(double p) { return rng.uniform() < p; }
  double between(double lo, double hi) {
    return static_cast<double>(
        rng.between(static_cast<std::int64_t>(lo), static_cast<std::int64_t>(std::max(lo, hi))));
  }
  // Delays either well inside the attempt timeout or past it: the two sides of every timeout rule.
  double within() { return between(1, timeout_ms / 4); }
  double beyond() { return between(timeout_ms + 1, 2 * timeout_ms); }
  void param(std::string key, double v) { params.emplace_back(std::move(key), v); }
};

using ExploreDrawFn = void (*)(ExploreDraw& d);

struct FaultTraits {
  InBand in_band = InBand::never;
  // The stream ends before a whole answer (cut, stall, in-stream error, bad frame, policy stop): the
  // events it did send can be a commit the caller never received.
  bool breaks_stream = false;
  // Its streamed plan is the healthy stream itself, every frame as rendered (only its timing may differ):
  // forwarded (FaultInput::body_forwarded), the upstream's frames pass unedited and the synthetic ones are
  // not rendered (Plan::passes_upstream_stream).
  bool keeps_healthy_stream = false;
  // The retry hint sent when the script gives none (rate_429: 1000 ms).
  std::optional<double> default_retry_after_ms{};
  // explore: may it add the common `latency_ms` (not before a hold or a reset, nor on slow, which draws
  // its own) and `inter_event_ms` (not on malformed_event, which draws its own); the draw of the fault's own
  // keys.
  bool explore_latency = true;
  bool explore_inter_event = true;
  ExploreDrawFn explore_draw = nullptr;
};

// The traits of a fault kind (its FaultSpec's, faults/registry.cpp).
const FaultTraits& fault_traits(FaultKind kind);

}  // namespace llmchaos::mock
