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

struct AttemptRecord {
  int index = 0;  // global attempt index (0-based)
  std::string route;
  int route_attempt = 0;                    // index on that route within this request
  AttemptKind kind = AttemptKind::initial;  // which layer spent it (a tool follow-up counts as initial)
  double start_ms = 0, end_ms = 0;          // relative to the request's start
  int status = 0;
  TransportEvent event = TransportEvent::none;
  Owner owner = Owner::none;  // none = success
  CommitState commit = CommitState::none;
  int events = 0;
  int visible_tokens = 0;
  std::string reason;      // classifier reason or transport error
  bool tool_call = false;  // the answer was a tool call (its side effect ran next)
};

struct FailurePoint {
  int point = 0;      // 1-based
  int attempt = 0;    // index of the failed attempt; -1 when none was sent (breaker open, budget spent)
  std::string route;  // route of the failed attempt
  Action action = Action::fail_closed;
  int rule = 0;
  std::string rule_text;
  std::string inputs;
  std::string next_route;  // retry / fallback target
  double wait_ms = 0;      // sleep before the next attempt (retry-after or backoff)
};

struct DecisionLog {
  std::string operation_id;
  int delivery = 1;  // 1 = execute(); 2.. = queue redeliveries of the same operation
  std::vector<AttemptRecord> attempts;
  std::vector<FailurePoint> failures;
  Outcome outcome = Outcome::fail_closed;
  bool answered = false;  // the caller got an answer (model or degraded)
  std::string text;       // the answer given to the caller
  std::string route;      // route that served the answer
  std::string model;      // model reported by that route
  int input_tokens = 0, output_tokens = 0;
  double elapsed_ms = 0;
  double extra_cost_usd = 0;  // cost of every attempt after the first
  std::vector<std::string>
      journal;  // attempt journal lines (JSON), requested -> started -> committed -> acknowledged
  // Set when a tier limit in front of the stack refused the request, so the stack never ran it (no
  // attempt, no failure point, not answered): the binding limit ("requests_per_minute", ...).
  std::string limited_by;
  // Set when the stack failed closed while every route of the workflow was cooling (cooldown.hpp): the
  // wait until the soonest is free. A caller's answer carries it as its Retry-After (the gateway's 429).
  std::optional<double> retry_after_ms;
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
