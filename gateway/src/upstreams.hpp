#pragma once
// The transport the gateway's client stacks talk through: a client::GroupTransport (a model group
// resolved to one of its upstream routes per attempt by client::Balancer: latency EMA x load, near-ties
// taking turns by weight, failing endpoints excluded for a while) that also counts every attempt per upstream
// for /stats and /metrics and traces each request in progress. Thread-safe: requests overlap, each on the
// gateway's thread that serves it, and each thread's attempts are traced apart.
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "llmchaos/client/group_transport.hpp"
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

using GroupMemberView = client::GroupMemberState;

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
  bool side_effect(const client::Endpoint& endpoint, const std::string& operation_id,
                   const std::string& tool) override;

  // The calling thread's request: begin_request() starts its trace, take_trace() hands it over.
  void begin_request();
  std::vector<AttemptTrace> take_trace();
  // A serving thread's attempts so far (kept): a stream's tokens arrive on the transport's thread.
  std::vector<AttemptTrace> trace(std::thread::id serving) const;

  std::map<std::string, UpstreamCounters> counters() const;
  std::map<std::string, std::vector<GroupMemberView>> groups(double now_ms) const;

 private:
  client::GroupTransport group_;
  mutable std::mutex mutex_;  // counters_, traces_
  std::vector<std::string> upstream_names_;
  std::map<std::string, UpstreamCounters> counters_;
  std::map<std::thread::id, std::vector<AttemptTrace>> traces_;  // per serving thread
};

}  // namespace llmchaos::gateway
