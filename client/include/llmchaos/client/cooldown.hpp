#pragma once
// Route cooldowns across requests (SPEC 5, issue 27). A provider that answers a quota 429 or a 402 will
// not serve the route again for a while: the stack keeps the route out for its quota window
// (`quota_cooldown_ms` of [route.NAME]; 0, the default: no cooldown is kept) while its fallback
// serves. A cooldown only ever grows: a later failure with a longer window extends it, a shorter one
// leaves it. Only the provider's word cools a route: an attempt the caller abandoned itself (its own
// attempt timeout, owner transient) says nothing about the route's capacity and never does.
// Pure state over times passed in (read from the injected Clock); not thread-safe (one owner serialises).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmchaos/core/types.hpp"

namespace llmchaos::client {

// The end a route's cooldown takes after a failure of `owner` at `now_ms` (real ms), given its current
// end (`current_end_ms`, below now when the route is free) and the route's quota window.
double cooldown_end_after(double current_end_ms, Owner owner, double quota_window_ms, double now_ms);

class RouteCooldowns {
 public:
  void on_failure(const std::string& route, Owner owner, double quota_window_ms, double now_ms);
  // The ms the route stays cool from `now_ms` (0: free).
  double remaining_ms(const std::string& route, double now_ms) const;
  // When every one of `routes` is cooling: the ms until the soonest of them is free (what a caller told
  // "every route is cooling" should wait, its Retry-After); else nothing.
  std::optional<double> all_cooling_for(const std::vector<std::string>& routes, double now_ms) const;

 private:
  std::map<std::string, double> end_ms_;  // route -> end of its cooldown
};

}  // namespace llmchaos::client
