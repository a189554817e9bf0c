#include "upstreams.hpp"

#include <stdexcept>

namespace llmchaos::gateway {
namespace {

bool attempt_ok(const client::AttemptResult& r) {
  return r.status / 100 == 2 &&
         (r.event == client::TransportEvent::none || r.event == client::TransportEvent::missing_terminator);
}

}  // namespace

UpstreamTransport::UpstreamTransport(const GatewayConfig& config, client::Transport& wire, Rng& rng)
    : upstreams_(config.upstreams), wire_(wire), rng_(rng) {
  for (const auto& [name, group] : config.groups) {
    std::vector<client::BalancerEndpoint> members;
    for (const auto& m : group.members) members.push_back({m, config.weights.contains(m) ? config.weights.at(m) : 1.0});
    client::BalancerSettings settings;
    settings.failure_half_life_ms *= config.time_scale;
    settings.initial_latency_ms = 1;  // an unmeasured member looks fast: each one is measured early
    Group g{group.members, std::make_unique<client::Balancer>(std::move(members), settings),
            std::vector<long>(group.members.size(), 0)};
    groups_.emplace(name, std::move(g));
  }
}

client::Endpoint UpstreamTransport::endpoint_for(const std::string& route) const {
  if (auto it = upstreams_.find(route); it != upstreams_.end()) return it->second;
  auto g = groups_.find(route);
  if (g == groups_.end()) throw std::logic_error("gateway: no upstream or group named " + route);
  // The stack classifies answers in this dialect; the base URL is replaced per attempt.
  return client::Endpoint{route, upstreams_.at(g->second.members.front()).dialect, "group:" + route};
}

const client::Endpoint& UpstreamTransport::resolve(const client::Endpoint& endpoint, double now_ms, Group** group,
                                                   std::size_t* index) {
  *group = nullptr;
  auto g = groups_.find(endpoint.route);
  if (g == groups_.end()) return endpoint;
  std::lock_guard lock(mutex_);
  const auto pick = g->second.balancer->pick(now_ms, rng_);
  g->second.balancer->on_start(pick.index);
  ++g->second.picks[pick.index];
  *group = &g->second;
  *index = pick.index;
  last_upstream_[endpoint.route] = g->second.members[pick.index];
  return upstreams_.at(g->second.members[pick.index]);
}

client::AttemptResult UpstreamTransport::send(const client::AttemptRequest& req, Clock& clock,
                                              const std::function<void(std::string_view token)>& on_token) {
  Group* group = nullptr;
  std::size_t index = 0;
  client::AttemptRequest wire_req = req;
  wire_req.endpoint = resolve(req.endpoint, clock.now_ms(), &group, &index);
  {
    std::lock_guard lock(mutex_);
    trace_.push_back({req.endpoint.route, wire_req.endpoint.route, false, false});
  }
  auto result = wire_.send(wire_req, clock, on_token);
  const bool ok = attempt_ok(result);
  const double latency = result.ended_ms - result.started_ms;
  std::lock_guard lock(mutex_);
  if (group) group->balancer->on_finish(index, ok, latency, clock.now_ms());
  auto& c = counters_[wire_req.endpoint.route];
  ++c.attempts;
  ++(ok ? c.successes : c.failures);
  c.last_latency_ms = latency;
  trace_.back().done = true;
  trace_.back().ok = ok;
  return result;
}

bool UpstreamTransport::side_effect(const client::Endpoint& endpoint, const std::string& operation_id,
                                    const std::string& tool) {
  if (!groups_.contains(endpoint.route)) return wire_.side_effect(endpoint, operation_id, tool);
  std::string member;
  {
    std::lock_guard lock(mutex_);
    member = last_upstream_[endpoint.route];
  }
  if (member.empty()) member = groups_.at(endpoint.route).members.front();
  return wire_.side_effect(upstreams_.at(member), operation_id, tool);
}

void UpstreamTransport::begin_request() {
  std::lock_guard lock(mutex_);
  trace_.clear();
}

std::vector<AttemptTrace> UpstreamTransport::trace() const {
  std::lock_guard lock(mutex_);
  return trace_;
}

std::map<std::string, UpstreamCounters> UpstreamTransport::counters() const {
  std::lock_guard lock(mutex_);
  auto out = counters_;
  for (const auto& [name, e] : upstreams_) out[name];  // every upstream, attempted or not
  return out;
}

std::map<std::string, std::vector<GroupMemberView>> UpstreamTransport::groups(double now_ms) const {
  std::lock_guard lock(mutex_);
  std::map<std::string, std::vector<GroupMemberView>> out;
  for (const auto& [name, g] : groups_) {
    auto& members = out[name];
    for (std::size_t i = 0; i < g.members.size(); ++i)
      members.push_back({g.members[i], g.balancer->in_flight(i), g.balancer->latency_ema_ms(i),
                         g.balancer->failure_score(i, now_ms), g.balancer->excluded(i, now_ms), g.picks[i]});
  }
  return out;
}

}  // namespace llmchaos::gateway
