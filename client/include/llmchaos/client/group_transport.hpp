#pragma once
// Model groups: several endpoints serving one model, which the stack sees as ONE route (one breaker, one
// policy). This transport resolves a group's route to one member per attempt with client::Balancer
// (latency EMA x load, near-ties taking turns by weight, a failing member excluded while its decayed
// failure score is high) and passes
// every other route through. Used by the gateway ([groups.NAME]) and the harness's inproc driver (a
// case's [groups]), so both balance alike. Thread-safe: the balancer state is read by other threads
// (the gateway's /stats) while one stack sends.
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "llmchaos/client/balancer.hpp"
#include "llmchaos/client/transport.hpp"
#include "llmchaos/core/rng.hpp"

namespace llmchaos::client {

struct ModelGroupSpec {
  std::string name;
  std::vector<BalancerEndpoint> members;  // upstream routes (each in the transport's endpoints), weights
};

struct GroupMemberState {
  std::string route;
  int in_flight = 0;
  double latency_ema_ms = 0;
  double failure_score = 0;
  bool excluded = false;
  long picks = 0;
};

// Whether the balancer counts the attempt a success: a 2xx whose stream ended cleanly (a missing
// terminator is the dialect's business, not the endpoint's health).
bool attempt_succeeded(const AttemptResult& r);

// The balancer settings of a group whose policy times run at `time_scale` (the failure half-life is a
// policy time); an unmeasured member looks fast (1 ms), so each one is measured early.
BalancerSettings group_balancer_settings(double time_scale);

class GroupTransport final : public Transport {
 public:
  // Called around every attempt sent (groups and plain routes alike), outside the transport's lock:
  // `route` is what the stack asked for (a route or a group), `upstream` the route really sent to.
  struct Hooks {
    std::function<void(const std::string& route, const std::string& upstream)> started;
    std::function<void(const std::string& upstream, bool ok, double latency_ms)> finished;
  };

  // `upstreams`: every real route -> its endpoint; a group's dialect is its first member's (the stack
  // classifies answers in one dialect). Throws std::invalid_argument for a member that is no upstream.
  GroupTransport(std::map<std::string, Endpoint> upstreams, const std::vector<ModelGroupSpec>& groups,
                 Transport& wire, Rng& rng, BalancerSettings settings, Hooks hooks = {});

  bool is_group(const std::string& route) const { return groups_.contains(route); }
  // The endpoint a stack is given for a route or a group (a group's base URL is replaced per attempt).
  Endpoint endpoint_for(const std::string& route) const;

  AttemptResult send(const AttemptRequest& req, Clock& clock,
                     const std::function<void(std::string_view token)>& on_token) override;
  // A group's side effect goes to the member that served its last attempt (the first one before any).
  bool side_effect(const Endpoint& endpoint, const std::string& operation_id,
                   const std::string& tool) override;

  std::map<std::string, std::vector<GroupMemberState>> groups(double now_ms) const;

 private:
  struct Group {
    std::vector<std::string> members;
    Balancer balancer;
    std::vector<long> picks;
    std::string last;  // the member of the last attempt
  };

  std::map<std::string, Endpoint> upstreams_;
  std::map<std::string, Group> groups_;
  Transport& wire_;
  Rng& rng_;
  Hooks hooks_;
  mutable std::mutex mutex_;  // the groups' balancer state, picks and last member
};

}  // namespace llmchaos::client
