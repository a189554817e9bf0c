#include "llmchaos/client/cooldown.hpp"

#include <algorithm>

namespace llmchaos::client {

double cooldown_end_after(double current_end_ms, Owner owner, double quota_window_ms, double now_ms) {
  if (owner != Owner::quota || quota_window_ms <= 0) return current_end_ms;
  return std::max(current_end_ms, now_ms + quota_window_ms);
}

void RouteCooldowns::on_failure(const std::string& route, Owner owner, double quota_window_ms, double now_ms) {
  double& end = end_ms_.try_emplace(route, -1.0).first->second;  // -1: never cooled
  end = cooldown_end_after(end, owner, quota_window_ms, now_ms);
}

double RouteCooldowns::remaining_ms(const std::string& route, double now_ms) const {
  const auto it = end_ms_.find(route);
  return it == end_ms_.end() ? 0 : std::max(0.0, it->second - now_ms);
}

std::optional<double> RouteCooldowns::all_cooling_for(const std::vector<std::string>& routes, double now_ms) const {
  std::optional<double> soonest;
  for (const auto& route : routes) {
    const double left = remaining_ms(route, now_ms);
    if (left <= 0) return std::nullopt;
    soonest = std::min(soonest.value_or(left), left);
  }
  return soonest;
}

}  // namespace llmchaos::client
