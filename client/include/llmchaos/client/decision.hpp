#pragma once
// The decision of SPEC section 3, rule for rule: a pure function of plain data that returns the
// action AND the rule that fired, with the inputs it looked at.
#include <optional>
#include <string>
#include <vector>

#include "llmchaos/client/classifier.hpp"
#include "llmchaos/core/types.hpp"

namespace llmchaos::client {

struct RouteOption {
  std::string route;
  double expected_latency_ms = 0;
  double cost_usd = 0;
  bool approved = true;
  bool healthy = true;  // breaker not open (and not excluded)
};

struct DecisionInput {
  Classification failure;
  int attempts_left = 0;
  double time_left_ms = 0;
  double cost_left_usd = 0;
  RouteOption current;                // the route that failed: the retry target
  bool current_breaker_open = false;
  std::vector<RouteOption> fallbacks; // approved candidates in order, excluding routes already tried as needed
  bool queue_allowed = false;
  bool degrade_allowed = false;
};

struct Decision {
  Action action = Action::fail_closed;
  int rule = 0;              // 1..7 as in SPEC 3
  std::string rule_text;     // "4: transient/rate failure, retry fits the budget, breaker closed"
  std::string inputs;        // the inputs the rule looked at, "owner=rate commit=none attempts_left=2 ..."
  std::string target_route;  // retry: the same route; fallback: the chosen route
  double wait_ms = 0;        // retry: the retry-after to honour (backoff is added by the executor)
};

Decision decide(const DecisionInput& in);

}  // namespace llmchaos::client
