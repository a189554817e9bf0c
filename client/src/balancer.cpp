#include "llmchaos/client/balancer.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
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

double Balancer::load(std::size_t index) const {
  // A floor keeps a zero-latency EMA from erasing the connection count.
  const double latency = std::max(1.0, latency_ema_ms(index));
  return (state_[index].in_flight + 1) * latency;
}

double Balancer::score(std::size_t index) const {
  return load(index) / endpoints_[index].weight;
}

double Balancer::slow_wait(std::size_t index, double load, double near_load,
                           double lightest_near_weight) const {
  if (load <= near_load) return 0;
  // Its turns come at most at the lightest near-tie's rate (a heavy weight does not outbid speed),
  // shrunk by (near / load)^power; the extra wait per turn is the difference to its own stride.
  const double weight = endpoints_[index].weight;
  const double rate =
      std::min(weight, lightest_near_weight) * std::pow(near_load / load, settings_.slow_share_power);
  return std::max(0.0, 1.0 / rate - 1.0 / weight);
}

std::size_t next_turn(std::span<const double> turns, Rng& rng) {
  std::size_t chosen = turns.size();
  int ties = 0;
  for (std::size_t i = 0; i < turns.size(); ++i) {
    if (!(turns[i] < std::numeric_limits<double>::infinity())) continue;
    if (chosen == turns.size() || turns[i] < turns[chosen]) {
      chosen = i;
      ties = 1;
    } else if (turns[i] == turns[chosen] && rng.between(0, ties++) == 0) {
      chosen = i;  // reservoir: each of k tied turns is kept with probability 1 / k
    }
  }
  if (chosen == turns.size()) throw std::logic_error("next_turn: no candidate");
  return chosen;
}

BalancerPick Balancer::pick(double now_ms, Rng& rng) const {
  if (endpoints_.empty()) throw std::logic_error("balancer: no endpoints");
  const std::size_t n = endpoints_.size();
  constexpr double none = std::numeric_limits<double>::infinity();
  // Each member's load once (+infinity: excluded), and the lowest of them.
  std::vector<double> loads(n, none);
  double lowest = none;
  for (std::size_t i = 0; i < n; ++i) {
    if (excluded(i, now_ms)) continue;
    loads[i] = load(i);
    lowest = std::min(lowest, loads[i]);
  }
  if (lowest < none) {
    // The near-ties take turns by weight. A slower member waits longer for its turn, but not forever:
    // one noisy sample must not starve it, so it is measured again now and then.
    const double near = lowest * settings_.share_within;
    double lightest_near = none;
    for (std::size_t i = 0; i < n; ++i)
      if (loads[i] <= near) lightest_near = std::min(lightest_near, endpoints_[i].weight);
    std::vector<double> turns(n, none);
    for (std::size_t i = 0; i < n; ++i)
      if (loads[i] < none)
        turns[i] = std::max(state_[i].turn + slow_wait(i, loads[i], near, lightest_near), now_turn_);
    const std::size_t i = next_turn(turns, rng);
    return {i, endpoints_[i].name, false};
  }
  // Panic: all excluded; the one whose failures decayed most comes back first (ties: a uniform draw).
  std::vector<double> failures(n);
  for (std::size_t i = 0; i < n; ++i) failures[i] = failure_score(i, now_ms);
  const std::size_t i = next_turn(failures, rng);
  return {i, endpoints_[i].name, true};
}

void Balancer::on_start(std::size_t index) {
  auto& s = state_.at(index);
  ++s.in_flight;
  now_turn_ = std::max(s.turn, now_turn_);
  s.turn = now_turn_ + 1.0 / endpoints_[index].weight;
}

void Balancer::on_finish(std::size_t index, bool success, double latency_ms, double now_ms) {
  auto& s = state_.at(index);
  if (s.in_flight > 0) --s.in_flight;
  if (success) {
    s.ema_ms =
        s.ema_ms ? settings_.ema_alpha * latency_ms + (1 - settings_.ema_alpha) * *s.ema_ms : latency_ms;
  } else {
    s.failures = failure_score(index, now_ms) + 1;
    s.failures_at_ms = now_ms;
  }
}

}  // namespace llmchaos::client
