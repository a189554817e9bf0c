#pragma once
// Balancer among the endpoints of one model group: least-connections scored by a latency EMA,
// load = (in_flight + 1) * latency_ema. The endpoints whose load is within `share_within` of the
// lowest are near-ties, and they take turns in proportion to their weights (stride scheduling: each
// start moves the endpoint's next turn 1 / weight later; the earliest turn is picked, exact ties by the
// injected Rng, next_turn). So equal endpoints of weights 3 and 1 take exactly three requests in four
// and one in four even when requests come one at a time (in_flight 0 at every pick), a clearly slower or
// busier one gets a rare turn (at most the lightest near-tie's rate, shrinking with the fourth power of
// how much slower it is: it is measured again, so one slow sample does not starve it), and one back from an
// exclusion or a slow spell takes turns from the present on (no burst to catch up).
#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/core/rng.hpp"

namespace llmchaos::client {

struct BalancerEndpoint {
  std::string name;
  double weight = 1;  // > 0; twice the weight takes twice the load at equal latency and load
};

struct BalancerSettings {
  double ema_alpha = 0.3;           // weight of the newest latency sample
  double initial_latency_ms = 100;  // an endpoint's latency before its first sample
  double failure_half_life_ms = 10000;
  double exclude_at_failures = 3;  // decayed failure score at which an endpoint is excluded
  double share_within = 1.25;  // a load at most this factor of the lowest is a near-tie (shared by weight)
  // A member slower than the near-ties still takes turns, at most at the lightest near-tie's rate and
  // shrunk by (share_within x lowest / load)^slow_share_power (2x slower: 0.15; 20x: 0.00002): it is
  // measured again now and then, so one noisy sample never starves it.
  double slow_share_power = 4;
};

// The index of the earliest of `turns` (+infinity: not a candidate; at least one finite), exact ties
// drawn uniformly with `rng`.
std::size_t next_turn(std::span<const double> turns, Rng& rng);

struct BalancerPick {
  std::size_t index = 0;
  std::string_view name;
  bool panic = false;  // every endpoint was excluded; this is the least-failed one
};

class Balancer {
 public:
  Balancer(std::vector<BalancerEndpoint> endpoints, BalancerSettings settings = {});

  // Choose an endpoint for a new request. Does not start it: call on_start with the index.
  // Precondition: at least one endpoint.
  BalancerPick pick(double now_ms, Rng& rng) const;
  // The request starts on `index`: its load grows, and its next turn comes 1 / weight later.
  void on_start(std::size_t index);
  // The request ended: its latency feeds the EMA on success; a failure adds 1 to the failure score.
  void on_finish(std::size_t index, bool success, double latency_ms, double now_ms);

  std::size_t size() const { return endpoints_.size(); }
  int in_flight(std::size_t index) const { return state_.at(index).in_flight; }
  double latency_ema_ms(std::size_t index) const;
  double failure_score(std::size_t index, double now_ms) const;
  bool excluded(std::size_t index, double now_ms) const;
  double load(std::size_t index) const;   // (in_flight + 1) x latency EMA (floored at 1 ms)
  double score(std::size_t index) const;  // load / weight
  // The extra turns a member of load `load` waits when the near-ties reach up to `near_load` (0 inside them).
  double slow_wait(std::size_t index, double load, double near_load, double lightest_near_weight) const;

 private:
  struct State {
    int in_flight = 0;
    std::optional<double> ema_ms;
    double failures = 0;  // failure score at `failures_at_ms`
    double failures_at_ms = 0;
    double turn = 0;  // when this endpoint's next turn comes (stride scheduling)
  };
  std::vector<BalancerEndpoint> endpoints_;
  BalancerSettings settings_;
  std::vector<State> state_;
  double now_turn_ = 0;  // the turn of the latest start: an endpoint never waits on turns it missed
};

}  // namespace llmchaos::client
