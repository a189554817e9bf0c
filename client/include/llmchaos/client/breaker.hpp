#pragma once
// Circuit breaker per route: closed -> (failure_threshold consecutive route failures) -> open ->
// (open_ms passes) -> half-open: at most half_open_max_probes probes in flight; success_threshold probe
// successes close it, one probe failure opens it again. Owners request, auth, policy and contract are
// the caller's or the answer's fault, not the route's: they never count as failures.
// Times are passed in (read from the injected Clock). Not thread-safe: one owner serialises calls.
#include <map>
#include <string>

#include "llmchaos/client/policy.hpp"
#include "llmchaos/core/types.hpp"

namespace llmchaos::client {

enum class BreakerState { closed, open, half_open };

// True when a failure of this owner says something about the route's health.
bool counts_as_route_failure(Owner owner);

class CircuitBreaker {
 public:
  explicit CircuitBreaker(BreakerSettings settings = {});

  // Ask before sending an attempt. Closed: yes. Open: no, until open_ms has passed (then half-open).
  // Half-open: yes while fewer than half_open_max_probes probes are in flight; a yes starts a probe.
  bool allow_request(double now_ms);
  // Would allow_request say yes now? (No side effect: for judging a fallback candidate's health.)
  bool would_allow(double now_ms) const;
  // Report how an allowed attempt ended.
  void on_success(double now_ms);
  void on_failure(Owner owner, double now_ms);

  BreakerState state(double now_ms) const;
  int consecutive_failures() const { return failures_; }
  int probes_in_flight() const { return probes_in_flight_; }
  int probes_started() const { return probes_started_; }  // over the breaker's life
  int times_opened() const { return times_opened_; }
  double opened_at_ms() const { return opened_at_ms_; }
  const BreakerSettings& settings() const { return settings_; }

 private:
  void open(double now_ms);
  void promote(double now_ms);  // open -> half-open once open_ms has passed

  BreakerSettings settings_;
  BreakerState state_ = BreakerState::closed;
  int failures_ = 0;         // consecutive route failures while closed
  int probe_successes_ = 0;  // while half-open
  int probes_in_flight_ = 0;
  int probes_started_ = 0;
  int times_opened_ = 0;
  double opened_at_ms_ = 0;
};

// One breaker per route named by the policy, with that route's settings.
std::map<std::string, CircuitBreaker> make_breakers(const Policy& policy);

}  // namespace llmchaos::client

namespace llmchaos {
template <>
struct enum_names<client::BreakerState> {
  static constexpr std::pair<client::BreakerState, std::string_view> table[] = {
      {client::BreakerState::closed, "closed"},
      {client::BreakerState::open, "open"},
      {client::BreakerState::half_open, "half_open"}};
};
}  // namespace llmchaos
