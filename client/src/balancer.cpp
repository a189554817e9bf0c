#include "llmchaos/client/balancer.hpp"

#include <cmath>
#include <stdexcept>

namespace llmchaos::client {

Balancer::Balancer(std::vector<BalancerEndpoint> endpoints, BalancerSettings settings)
    : endpoints_(std::move(endpoints)), settings_(settings), state_(endpoints_.size()) {
  for (const auto& e : endpoints_)
    if (!(e.weight > 0)) throw std::invalid_argument("balancer: endpoint " + e.name + " needs a weight > 0");
}

double Balancer::latency_ema_ms(std::size_t index) const {
  return state_.at(index).ema_ms.value_or(settings_.initial_latency_ms);
}

double Balancer::failure_score(std::size_t index, double now_ms) const {
  const auto& s = state_.at(index);
  const double age = std::max(0.0, now_ms - s.failures_at_ms);
  return s.failures * std::exp2(-age / settings_.failure_half_life_ms);
}

bool Balancer::excluded(std::size_t index, double now_ms) const {
  return failure_score(index, now_ms) >= settings_.exclude_at_failures;
}

double Balancer::score(std::size_t index) const {
  // A floor keeps a zero-latency EMA from erasing the connection count.
  const double latency = std::max(1.0, latency_ema_ms(index));
  return (state_[index].in_flight + 1) * latency / endpoints_[index].weight;
}

BalancerPick Balancer::pick(double now_ms, Rng& rng) const {
  if (endpoints_.empty()) throw std::logic_error("balancer: no endpoints");
  // Reservoir choice among the best, so equal endpoints share the load.
  auto best = [&](auto better, auto eligible) {
    std::size_t chosen = endpoints_.size();
    int ties = 0;
    for (std::size_t i = 0; i < endpoints_.size(); ++i) {
      if (!eligible(i)) continue;
      if (chosen == endpoints_.size() || better(i, chosen)) {
        chosen = i;
        ties = 1;
      } else if (!better(chosen, i) && rng.between(0, ties++) == 0) {
        chosen = i;
      }
    }
    return chosen;
  };
  auto by_score = [&](std::size_t a, std::size_t b) { return score(a) < score(b); };
  std::size_t i = best(by_score, [&](std::size_t k) { return !excluded(k, now_ms); });
  if (i != endpoints_.size()) return {i, endpoints_[i].name, false};
  // Panic: all excluded; the one whose failures decayed most comes back first.
  auto by_failures = [&](std::size_t a, std::size_t b) { return failure_score(a, now_ms) < failure_score(b, now_ms); };
  i = best(by_failures, [](std::size_t) { return true; });
  return {i, endpoints_[i].name, true};
}

void Balancer::on_start(std::size_t index) { ++state_.at(index).in_flight; }

void Balancer::on_finish(std::size_t index, bool success, double latency_ms, double now_ms) {
  auto& s = state_.at(index);
  if (s.in_flight > 0) --s.in_flight;
  if (success) {
    s.ema_ms = s.ema_ms ? settings_.ema_alpha * latency_ms + (1 - settings_.ema_alpha) * *s.ema_ms : latency_ms;
  } else {
    s.failures = failure_score(index, now_ms) + 1;
    s.failures_at_ms = now_ms;
  }
}

}  // namespace llmchaos::client
