#include "upstreams.hpp"

#include <stdexcept>

namespace llmchaos::gateway {
namespace {

std::vector<client::ModelGroupSpec> group_specs(const GatewayConfig& config) {
  std::vector<client::ModelGroupSpec> out;
  for (const auto& [name, group] : config.groups) {
    client::ModelGroupSpec g{name, {}};
    for (const auto& m : group.members)
      g.members.push_back({m, config.weights.contains(m) ? config.weights.at(m) : 1.0});
    out.push_back(std::move(g));
  }
  return out;
}

}  // namespace

UpstreamTransport::UpstreamTransport(const GatewayConfig& config, client::Transport& wire, Rng& rng)
    : group_(config.upstreams, group_specs(config), wire, rng,
             client::group_balancer_settings(config.time_scale),
             {[this](const std::string& route, const std::string& upstream) {
                std::lock_guard lock(mutex_);
                traces_[std::this_thread::get_id()].push_back({route, upstream, false, false});
              },
              [this](const std::string& upstream, bool ok, double latency_ms) {
                std::lock_guard lock(mutex_);
                auto& c = counters_[upstream];
                ++c.attempts;
                ++(ok ? c.successes : c.failures);
                c.last_latency_ms = latency_ms;
                auto& trace = traces_[std::this_thread::get_id()];
                trace.back().done = true;
                trace.back().ok = ok;
              }}) {
  for (const auto& [name, e] : config.upstreams) upstream_names_.push_back(name);
}

client::Endpoint UpstreamTransport::endpoint_for(const std::string& route) const {
  return group_.endpoint_for(route);
}

client::AttemptResult UpstreamTransport::send(const client::AttemptRequest& req, Clock& clock,
                                              const std::function<void(std::string_view token)>& on_token) {
  return group_.send(req, clock, on_token);
}

bool UpstreamTransport::side_effect(const client::Endpoint& endpoint, const std::string& operation_id,
                                    const std::string& tool) {
  return group_.side_effect(endpoint, operation_id, tool);
}

void UpstreamTransport::begin_request() {
  std::lock_guard lock(mutex_);
  traces_[std::this_thread::get_id()].clear();
}

std::vector<AttemptTrace> UpstreamTransport::take_trace() {
  std::lock_guard lock(mutex_);
  auto it = traces_.find(std::this_thread::get_id());
  if (it == traces_.end()) return {};
  auto out = std::move(it->second);
  traces_.erase(it);
  return out;
}

std::vector<AttemptTrace> UpstreamTransport::trace(std::thread::id serving) const {
  std::lock_guard lock(mutex_);
  auto it = traces_.find(serving);
  return it == traces_.end() ? std::vector<AttemptTrace>{} : it->second;
}

std::map<std::string, UpstreamCounters> UpstreamTransport::counters() const {
  std::lock_guard lock(mutex_);
  auto out = counters_;
  for (const auto& name : upstream_names_) out[name];  // every upstream, attempted or not
  return out;
}

std::map<std::string, std::vector<GroupMemberView>> UpstreamTransport::groups(double now_ms) const {
  return group_.groups(now_ms);
}

}  // namespace llmchaos::gateway
