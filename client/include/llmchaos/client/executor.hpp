#pragma once
// The executor runs one workflow request through classifier, budget, decision, backoff, breakers and
// the fallback chain against the routes, and writes a decision log. A ClientStack persists across
// requests (breakers, limiter, balancer, queue), so a sequence of requests shares them.
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "llmchaos/client/breaker.hpp"
#include "llmchaos/client/budget.hpp"
#include "llmchaos/client/decision.hpp"
#include "llmchaos/client/policy.hpp"
#include "llmchaos/client/transport.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/core/decision_log.hpp"
#include "llmchaos/core/rng.hpp"

namespace llmchaos::client {

struct WorkflowRequest {
  bool stream = false;
  std::string model = "mock-model";
  std::string prompt = "classify this";
  bool tool_call = false;
  bool prefill = false;
  std::string operation_id;  // generated when empty
  // Receives the answer as it becomes visible (streamed tokens, or the whole answer once it passed
  // the output contract). Optional; called on the transport's thread while execute() blocks.
  std::function<void(std::string_view)> on_token;
};

// The output contract: the required fields missing from a JSON-object answer (every field when the
// answer is not a JSON object). Empty = the answer meets the contract.
std::vector<std::string> missing_output_fields(std::string_view answer,
                                               const std::vector<std::string>& required);

class RequestQueue;

class ClientStack {
 public:
  // `endpoints`: route name -> endpoint. Clock, RNG and transport must outlive the stack.
  ClientStack(Policy policy, std::map<std::string, Endpoint> endpoints, Clock& clock, Rng& rng,
              Transport& transport);
  ~ClientStack();
  DecisionLog execute(const WorkflowRequest& request);
  const Policy& policy() const;

  // Also append the attempt journal to this file (JSON lines). Throws naming the path.
  void journal_to(const std::string& path);
  // The queue outlet. A redelivery runs the queued request again (same operation id, routes from the
  // primary) on the budget it already spent: attempts and extra cost carry over; its time window
  // starts at the redelivery, because time waiting in the queue is not the synchronous SLO.
  std::size_t queued() const;
  std::optional<DecisionLog> redeliver_next();
  std::vector<DecisionLog> drain();  // redelivers what was queued when called (a re-queued item waits)
  RequestQueue& queue();
  // The route's breaker (persists across requests); nullptr for an unknown route. Not for use while
  // requests run on the stack: breaker_state copies it under the stack's lock.
  const CircuitBreaker* breaker(const std::string& route) const;
  std::optional<CircuitBreaker> breaker_state(const std::string& route) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmchaos::client
