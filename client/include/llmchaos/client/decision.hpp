#pragma once
// The decision of SPEC section 3, rule for rule: a pure function of plain data that returns the
// action AND the rule that fired, with the inputs it looked at.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/client/classifier.hpp"
#include "llmchaos/core/inline_text.hpp"
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
  RouteOption current;  // the route that failed: the retry target
  bool current_breaker_open = false;
  std::vector<RouteOption>
      fallbacks;  // approved candidates in order, excluding routes already tried as needed
  bool queue_allowed = false;
  bool queue_full = false;  // the queue cannot take the request: no outlet, rule 7 decides
  bool degrade_allowed = false;
  // Added (SPEC 3 rule 0): the failure is a cut of a background response (the stream broke off, the
  // provider goes on) whose id and last sequence number are known, so it can be resumed.
  bool resumable_cut = false;
};

// The inputs text of a decision: held inline, so deciding allocates nothing (bench/decide).
inline constexpr std::size_t decision_inputs_limit = 1024;
using DecisionText = InlineText<decision_inputs_limit + 3>;  // + "..." when cut

struct Decision {
  Action action = Action::fail_closed;
  int rule = 0;  // 0..7 as in SPEC 3 (0: resume, or not a failure)
  // "4: transient/rate failure, retry fits the budget, breaker closed": one of the rules' constant texts
  // (static storage), so deciding copies no text.
  std::string_view rule_text;
  // The inputs the rule looked at, "owner=rate commit=none attempts_left=2 ...": at most
  // decision_inputs_limit bytes, then "..." (reads as a std::string_view; converts to a std::string).
  DecisionText inputs;
  std::string target_route;  // retry: the same route; fallback: the chosen route
  double wait_ms = 0;        // retry: the retry-after to honour (backoff is added by the executor)
};

// Rules, first match wins (SPEC 3):
//  0. owner none: not a failure -> Action::none.
//  0. resumable_cut, attempts_left > 0, time_left >= current.expected_latency -> resume (SPEC 3 rule 0:
//     a resume duplicates nothing, so it comes before rule 2; the cost is not a condition of it).
//  1. owner request / auth / policy -> fail_closed.
//  2. commit committed / unknown -> fail_closed.
//  3. owner unknown -> queue if queue_allowed, else fail_closed.
//  4. owner transient / rate, attempts_left > 0, time_left >= retry_after + current.expected_latency,
//     cost_left >= current.cost, current breaker not open (current_breaker_open, or !current.healthy)
//     -> retry the current route; wait_ms = the retry-after.
//  5. owner transient / rate / quota -> fallback to the first candidate (in order) that is
//     not the current route, approved, healthy, with attempts_left > 0, time_left >= its expected
//     latency and cost_left >= its cost. The retry-after is the failed route's: it does not apply here.
//  6. queue_allowed -> queue.
//  7. degrade_allowed -> degrade, else fail_closed.
// Owner `contract` (a 200 answer without a required field, SPEC 2 schema_missing): rules 4 and 5 name
// transient / rate (/ quota) only, so it goes to rule 6 (queue) or 7 (degrade or fail_closed).
// `inputs` lists what the rules looked at, including why retry / each fallback did not apply
// ("retry=no(breaker open) fallbacks=[backup:unhealthy]").
Decision decide(const DecisionInput& in);
// Added: the same into an existing Decision (hot loops: a gateway, bench/decide): `out` is fully
// overwritten, and its target_route's capacity reused.
void decide_into(const DecisionInput& in, Decision& out);

}  // namespace llmchaos::client
