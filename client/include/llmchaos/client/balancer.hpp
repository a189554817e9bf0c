#pragma once
// Balancer among the endpoints of one model group: weighted least-connections scored by a latency
// EMA, score = (in_flight + 1) * latency_ema / weight, lowest wins (ties broken by the injected Rng).
// An endpoint is excluded while its failure score, which decays with a half-life, is at or above the
// threshold; the decay brings every endpoint back, so none is excluded forever. When every endpoint is
// excluded, the least-failed one is still picked (panic mode) rather than failing the group.
// Times are passed in (read from the injected Clock). Not thread-safe: one owner serialises calls.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/core/rng.hpp"

namespace llmchaos::client {

struct BalancerEndpoint {
  std::string name;
  double weight = 1;  // > 0; twice the weight takes twice the load at equal latency
};

struct BalancerSettings {
  double ema_alpha = 0.3;             // weight of the newest latency sample
  double initial_latency_ms = 100;    // an endpoint's latency before its first sample
  double failure_half_life_ms = 10000;
  double exclude_at_failures = 3;     // decayed failure score at which an endpoint is excluded
};

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
  void on_start(std::size_t index);
  // The request ended: its latency feeds the EMA on success; a failure adds 1 to the failure score.
  void on_finish(std::size_t index, bool success, double latency_ms, double now_ms);

  std::size_t size() const { return endpoints_.size(); }
  int in_flight(std::size_t index) const { return state_.at(index).in_flight; }
  double latency_ema_ms(std::size_t index) const;
  double failure_score(std::size_t index, double now_ms) const;
  bool excluded(std::size_t index, double now_ms) const;
  double score(std::size_t index) const;

 private:
  struct State {
    int in_flight = 0;
    std::optional<double> ema_ms;
    double failures = 0;       // failure score at `failures_at_ms`
    double failures_at_ms = 0;
  };
  std::vector<BalancerEndpoint> endpoints_;
  BalancerSettings settings_;
  std::vector<State> state_;
};

}  // namespace llmchaos::client
