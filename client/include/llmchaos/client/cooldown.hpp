#pragma once
// Route cooldowns across requests (SPEC 5, issue 27). A provider that answers a quota 429 or a 402 will
// not serve the route again for a while: the stack keeps the route out for its quota window
// (`quota_cooldown_ms` of [route.NAME]; 0, the default: no cooldown is kept) while its fallback
// serves. With `rate_cooldown = true` a rate 429's Retry-After outlives its request too: the next
// requests leave the route alone until it has passed (off by default: a stack honours it within the
// request only). A cooldown only ever grows: a later failure with a longer wait extends it, a shorter
// one leaves it. Only the provider's word cools a route: an attempt the caller abandoned itself (its own
// attempt timeout, owner transient) says nothing about the route's capacity and never does.
// Pure state over times passed in (read from the injected Clock); not thread-safe (one owner serialises).
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "llmchaos/core/types.hpp"

namespace llmchaos::client {

// What a route's policy keeps (RoutePolicy's quota_cooldown_ms, rate_cooldown).
struct CooldownSettings {
  double quota_window_ms = 0;
  bool rate = false;
};

// One failed attempt as the cooldown sees it: its owner and the retry hint its answer carried.
struct CooldownCause {
  Owner owner = Owner::none;
  std::optional<double> retry_after_ms;
};

// The end a route's cooldown takes after a failure at `now_ms` (real ms), given its current end
// (`current_end_ms`, below now when the route is free).
double cooldown_end_after(double current_end_ms, const CooldownCause& f, const CooldownSettings& s,
                          double now_ms);

class RouteCooldowns {
 public:
  void on_failure(const std::string& route, const CooldownCause& f, const CooldownSettings& s, double now_ms);
  // The ms the route stays cool from `now_ms` (0: free).
  double remaining_ms(const std::string& route, double now_ms) const;
  // The owner of the failure that set the route's cooldown end (rate or quota).
  Owner cooled_by(const std::string& route) const;
  // When every one of `routes` is cooling: the ms until the soonest of them is free (what a caller told
  // "every route is cooling" should wait, its Retry-After); else nothing.
  std::optional<double> all_cooling_for(const std::vector<std::string>& routes, double now_ms) const;

 private:
  struct Cooldown {
    double end_ms = -1;  // -1: never cooled
    Owner owner = Owner::none;
  };
  std::map<std::string, Cooldown> routes_;
};

}  // namespace llmchaos::client
