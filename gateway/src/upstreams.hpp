#pragma once
// The transport the gateway's client stacks talk through: it resolves a model group to one of its
// upstream routes per attempt (client::Balancer: latency EMA x load, failing endpoints excluded for a
// while) and counts every attempt per upstream for /stats and /metrics. Thread-safe for the readers
// of the counters; send() itself is called by one stack at a time (the gateway serializes them).
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "llmchaos/client/balancer.hpp"
#include "llmchaos/client/transport.hpp"
#include "llmchaos/core/rng.hpp"
#include "llmchaos/gateway/config.hpp"

namespace llmchaos::gateway {

struct UpstreamCounters {
  long attempts = 0;
  long successes = 0;
  long failures = 0;
  double last_latency_ms = 0;
};

struct GroupMemberView {
  std::string route;
  int in_flight = 0;
  double latency_ema_ms = 0;
  double failure_score = 0;
  bool excluded = false;
  long picks = 0;
};

// One attempt of the request in progress: which logical route (route or group) and which upstream.
struct AttemptTrace {
  std::string route;
  std::string upstream;
  bool done = false;  // the attempt has ended (tokens of a stream arrive before)
  bool ok = false;
};

class UpstreamTransport final : public client::Transport {
 public:
  UpstreamTransport(const GatewayConfig& config, client::Transport& wire, Rng& rng);

  // The endpoint a stack is given for a chain member (a group: its members' dialect, resolved per attempt).
  client::Endpoint endpoint_for(const std::string& route) const;

  client::AttemptResult send(const client::AttemptRequest& req, Clock& clock,
                             const std::function<void(std::string_view token)>& on_token) override;
  bool side_effect(const client::Endpoint& endpoint, const std::string& operation_id, const std::string& tool) override;

  // The request in progress (one at a time): its attempts so far.
  void begin_request();
  std::vector<AttemptTrace> trace() const;

  std::map<std::string, UpstreamCounters> counters() const;
  std::map<std::string, std::vector<GroupMemberView>> groups(double now_ms) const;

 private:
  struct Group {
    std::vector<std::string> members;
    std::unique_ptr<client::Balancer> balancer;
    std::vector<long> picks;
  };
  const client::Endpoint& resolve(const client::Endpoint& endpoint, double now_ms, Group** group, std::size_t* index);

  std::map<std::string, client::Endpoint> upstreams_;
  std::map<std::string, Group> groups_;
  client::Transport& wire_;
  Rng& rng_;
  mutable std::mutex mutex_;  // counters_, trace_, balancer state (read by /stats)
  std::map<std::string, UpstreamCounters> counters_;
  std::vector<AttemptTrace> trace_;
  std::map<std::string, std::string> last_upstream_;  // group -> member of the last attempt (tool side effects)
};

}  // namespace llmchaos::gateway
