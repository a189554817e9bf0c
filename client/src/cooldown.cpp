#include "llmchaos/client/cooldown.hpp"

#include <algorithm>

namespace llmchaos::client {

double cooldown_end_after(double current_end_ms, const CooldownCause& f, const CooldownSettings& s,
                          double now_ms) {
  double end = current_end_ms;
  if (f.owner == Owner::rate && s.rate && f.retry_after_ms) end = std::max(end, now_ms + *f.retry_after_ms);
  if (f.owner != Owner::quota || s.quota_window_ms <= 0) return end;
  return std::max(end, now_ms + s.quota_window_ms);
}

void RouteCooldowns::on_failure(const std::string& route, const CooldownCause& f, const CooldownSettings& s,
                                double now_ms) {
  auto& cd = routes_[route];
  const double end = cooldown_end_after(cd.end_ms, f, s, now_ms);
  if (end != cd.end_ms) cd.owner = f.owner;
  cd.end_ms = end;
}

double RouteCooldowns::remaining_ms(const std::string& route, double now_ms) const {
  const auto it = routes_.find(route);
  return it == routes_.end() ? 0 : std::max(0.0, it->second.end_ms - now_ms);
}

Owner RouteCooldowns::cooled_by(const std::string& route) const {
  const auto it = routes_.find(route);
  return it == routes_.end() ? Owner::none : it->second.owner;
}

std::optional<double> RouteCooldowns::all_cooling_for(const std::vector<std::string>& routes,
                                                      double now_ms) const {
  std::optional<double> soonest;
  for (const auto& route : routes) {
    const double left = remaining_ms(route, now_ms);
    if (left <= 0) return std::nullopt;
    soonest = std::min(soonest.value_or(left), left);
  }
  return soonest;
}

}  // namespace llmchaos::client
