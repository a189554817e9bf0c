#include "llmchaos/client/breaker.hpp"

namespace llmchaos::client {

bool counts_as_route_failure(Owner owner) {
  switch (owner) {
    case Owner::transient:
    case Owner::rate:
    case Owner::quota:
    case Owner::unknown:
      return true;
    case Owner::none:
    case Owner::request:
    case Owner::auth:
    case Owner::policy:
    case Owner::contract:
      return false;
  }
  return false;
}

CircuitBreaker::CircuitBreaker(BreakerSettings settings) : settings_(settings) {}

void CircuitBreaker::open(double now_ms) {
  state_ = BreakerState::open;
  opened_at_ms_ = now_ms;
  failures_ = 0;
  probe_successes_ = 0;
  probes_in_flight_ = 0;
  ++times_opened_;
}

void CircuitBreaker::promote(double now_ms) {
  if (state_ == BreakerState::open && now_ms >= opened_at_ms_ + settings_.open_ms) {
    state_ = BreakerState::half_open;
    probe_successes_ = 0;
    probes_in_flight_ = 0;
  }
}

BreakerState CircuitBreaker::state(double now_ms) const {
  if (state_ == BreakerState::open && now_ms >= opened_at_ms_ + settings_.open_ms)
    return BreakerState::half_open;
  return state_;
}

bool CircuitBreaker::would_allow(double now_ms) const {
  switch (state(now_ms)) {
    case BreakerState::closed:
      return true;
    case BreakerState::open:
      return false;
    case BreakerState::half_open:
      // Still open at state_ means no probe has started yet in this half-open period.
      return state_ == BreakerState::open || probes_in_flight_ < settings_.half_open_max_probes;
  }
  return false;
}

bool CircuitBreaker::allow_request(double now_ms) {
  promote(now_ms);
  switch (state_) {
    case BreakerState::closed:
      return true;
    case BreakerState::open:
      return false;
    case BreakerState::half_open:
      if (probes_in_flight_ >= settings_.half_open_max_probes) return false;
      ++probes_in_flight_;
      ++probes_started_;
      return true;
  }
  return false;
}

void CircuitBreaker::on_success(double now_ms) {
  promote(now_ms);
  switch (state_) {
    case BreakerState::closed:
      failures_ = 0;
      break;
    case BreakerState::open:
      break;  // a request allowed before the breaker opened: no evidence now
    case BreakerState::half_open:
      if (probes_in_flight_ > 0) --probes_in_flight_;
      if (++probe_successes_ >= settings_.success_threshold) {
        state_ = BreakerState::closed;
        failures_ = 0;
        probe_successes_ = 0;
        probes_in_flight_ = 0;
      }
      break;
  }
}

void CircuitBreaker::on_failure(Owner owner, double now_ms) {
  promote(now_ms);
  if (!counts_as_route_failure(owner)) {
    // The route answered; the fault was the request's. A probe slot is freed, nothing else changes.
    if (state_ == BreakerState::half_open && probes_in_flight_ > 0) --probes_in_flight_;
    return;
  }
  switch (state_) {
    case BreakerState::closed:
      if (++failures_ >= settings_.failure_threshold) open(now_ms);
      break;
    case BreakerState::open:
      break;
    case BreakerState::half_open:
      open(now_ms);
      break;  // the probe failed: back to open for open_ms
  }
}

std::map<std::string, CircuitBreaker> make_breakers(const Policy& policy) {
  std::map<std::string, CircuitBreaker> out;
  for (const auto& [name, route] : policy.routes) out.emplace(name, CircuitBreaker(route.breaker));
  return out;
}

}  // namespace llmchaos::client
