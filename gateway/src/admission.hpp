#pragma once
// The gateway's admission of a chat request (issue 28): key -> tier -> body -> quality chain -> the
// tier's limits, in that order, as a function over plain data. No socket, no clock: the caller reads
// the request's fields and the limiter's time, so tests/gateway/test_admission.cpp runs it without a
// server. The only state it touches is the limiter, which counts the request when it is admitted.
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "llmchaos/client/limiter.hpp"
#include "llmchaos/gateway/config.hpp"
#include "openai_wire.hpp"

namespace llmchaos::gateway {

// What admission reads of an HTTP chat request.
struct ChatArrival {
  std::string key;  // the bearer key; "" when none was sent
  std::string_view body;
  std::string quality;  // the x-llmchaos-quality header; "" when absent
};

struct Admitted {
  std::string key;
  const Tier* tier = nullptr;  // into the config
  ChatRequest request;
  std::string quality;          // the chain that serves it (a key of config.qualities)
  double estimated_tokens = 0;  // charged to the tier's bucket now, settled after the answer
};

struct Refusal {
  std::string reason;  // the /stats "rejected" counter: unauthorized, bad_request, rate_limited
  WireError error;
  std::optional<double> retry_after_ms;  // real ms (scaled back from the limiter's); none: never fits
};

using Admission = std::variant<Admitted, Refusal>;

// `limiter_now_ms`: the limiter's time, i.e. the clock's ms / config.time_scale (the tiers' windows follow
// the time scale like every policy time); a wait it reports is multiplied back by config.time_scale.
Admission admit(const ChatArrival& arrival, const GatewayConfig& config, client::RateLimiter& limiter,
                double limiter_now_ms);

// "abcdef***": how /stats, /metrics and error messages name a key.
std::string masked(const std::string& key);

}  // namespace llmchaos::gateway
