#include "llmchaos/client/group_transport.hpp"

#include <stdexcept>

namespace llmchaos::client {

bool attempt_succeeded(const AttemptResult& r) {
  return r.status / 100 == 2 &&
         (r.event == TransportEvent::none || r.event == TransportEvent::missing_terminator);
}

BalancerSettings group_balancer_settings(double time_scale) {
  BalancerSettings settings;
  settings.failure_half_life_ms *= time_scale;
  settings.initial_latency_ms = 1;
  return settings;
}

GroupTransport::GroupTransport(std::map<std::string, Endpoint> upstreams,
                               const std::vector<ModelGroupSpec>& groups, Transport& wire, Rng& rng,
                               BalancerSettings settings, Hooks hooks)
    : upstreams_(std::move(upstreams)), wire_(wire), rng_(rng), hooks_(std::move(hooks)) {
  for (const auto& g : groups) {
    if (g.members.empty()) throw std::invalid_argument("model group " + g.name + " has no member");
    std::vector<std::string> names;
    for (const auto& m : g.members) {
      if (!upstreams_.contains(m.name))
        throw std::invalid_argument("model group " + g.name + ": no upstream " + m.name);
      names.push_back(m.name);
    }
    groups_.emplace(g.name,
                    Group{names, Balancer(g.members, settings), std::vector<long>(names.size(), 0), {}});
  }
}

Endpoint GroupTransport::endpoint_for(const std::string& route) const {
  if (auto it = upstreams_.find(route); it != upstreams_.end()) return it->second;
  auto g = groups_.find(route);
  if (g == groups_.end()) throw std::logic_error("no upstream or model group named " + route);
  return Endpoint{route, upstreams_.at(g->second.members.front()).dialect, "group:" + route};
}

AttemptResult GroupTransport::send(const AttemptRequest& req, Clock& clock,
                                   const std::function<void(std::string_view token)>& on_token) {
  AttemptRequest wire_req = req;
  Group* group = nullptr;
  std::size_t index = 0;
  if (auto g = groups_.find(req.endpoint.route); g != groups_.end()) {
    std::lock_guard lock(mutex_);
    group = &g->second;
    index = group->balancer.pick(clock.now_ms(), rng_).index;
    group->balancer.on_start(index);
    ++group->picks[index];
    group->last = group->members[index];
    wire_req.endpoint = upstreams_.at(group->last);
  }
  if (hooks_.started) hooks_.started(req.endpoint.route, wire_req.endpoint.route);
  auto result = wire_.send(wire_req, clock, on_token);
  const bool ok = attempt_succeeded(result);
  const double latency = result.ended_ms - result.started_ms;
  if (group) {
    std::lock_guard lock(mutex_);
    group->balancer.on_finish(index, ok, latency, clock.now_ms());
  }
  if (hooks_.finished) hooks_.finished(wire_req.endpoint.route, ok, latency);
  return result;
}

bool GroupTransport::side_effect(const Endpoint& endpoint, const std::string& operation_id,
                                 const std::string& tool) {
  auto g = groups_.find(endpoint.route);
  if (g == groups_.end()) return wire_.side_effect(endpoint, operation_id, tool);
  std::string member;
  {
    std::lock_guard lock(mutex_);
    member = g->second.last.empty() ? g->second.members.front() : g->second.last;
  }
  return wire_.side_effect(upstreams_.at(member), operation_id, tool);
}

std::map<std::string, std::vector<GroupMemberState>> GroupTransport::groups(double now_ms) const {
  std::lock_guard lock(mutex_);
  std::map<std::string, std::vector<GroupMemberState>> out;
  for (const auto& [name, g] : groups_) {
    auto& members = out[name];
    for (std::size_t i = 0; i < g.members.size(); ++i)
      members.push_back({g.members[i], g.balancer.in_flight(i), g.balancer.latency_ema_ms(i),
                         g.balancer.failure_score(i, now_ms), g.balancer.excluded(i, now_ms), g.picks[i]});
  }
  return out;
}

}  // namespace llmchaos::client
