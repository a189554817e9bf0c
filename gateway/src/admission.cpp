#include "admission.hpp"

#include <fmt/format.h>

#include <cmath>

namespace llmchaos::gateway {

std::string masked(const std::string& key) {
  return key.size() <= 6 ? "***" : key.substr(0, 6) + "***";
}

namespace {

// The request's header, else the tier's default, else the gateway's, else "default".
std::string chosen_quality(const ChatArrival& arrival, const Tier& tier, const GatewayConfig& config) {
  for (const std::string* q : {&arrival.quality, &tier.quality, &config.default_quality})
    if (!q->empty()) return *q;
  return "default";
}

Refusal limit_refusal(const client::LimitVerdict& verdict, const Tier& tier, double time_scale) {
  Refusal r{
      "rate_limited",
      WireError{429, fmt::format("rate limit reached for {} of tier {}", verdict.limit, tier.name),
                verdict.limit == "tokens_per_minute" ? "tokens" : "requests", "", "rate_limit_exceeded"},
      std::nullopt};
  if (const double wait_ms = verdict.wait_ms * time_scale; std::isfinite(wait_ms)) {
    r.retry_after_ms = wait_ms;
    r.error.message += fmt::format("; retry in {:.0f} ms", std::ceil(wait_ms));
  } else {
    r.error.message += "; the request alone exceeds the tier's tokens per minute";
  }
  return r;
}

}  // namespace

Admission admit(const ChatArrival& arrival, const GatewayConfig& config, client::RateLimiter& limiter,
                double limiter_now_ms) {
  auto key_it = config.keys.find(arrival.key);
  if (key_it == config.keys.end())
    return Refusal{"unauthorized",
                   WireError{401,
                             arrival.key.empty() ? "missing API key: send 'Authorization: Bearer KEY'"
                                                 : "incorrect API key provided: " + masked(arrival.key),
                             "invalid_request_error", "", "invalid_api_key"},
                   std::nullopt};
  const Tier& tier = config.tiers.at(key_it->second);

  WireError bad;
  auto parsed = parse_chat_request(arrival.body, bad);
  if (!parsed) return Refusal{"bad_request", bad, std::nullopt};

  std::string quality = chosen_quality(arrival, tier, config);
  if (!config.qualities.contains(quality))
    return Refusal{"bad_request",
                   WireError{400, "unknown quality \"" + quality + "\"", "invalid_request_error",
                             "x-llmchaos-quality", "unknown_quality"},
                   std::nullopt};

  // Last: only a request every other check let through is counted against the tier.
  const double estimate = client::estimate_tokens(parsed->workflow.prompt) + parsed->max_tokens;
  const auto verdict = limiter.try_acquire(arrival.key, limiter_now_ms, estimate);
  if (!verdict.allowed) return limit_refusal(verdict, tier, config.time_scale);
  return Admitted{arrival.key, &tier, std::move(*parsed), std::move(quality), estimate};
}

}  // namespace llmchaos::gateway
