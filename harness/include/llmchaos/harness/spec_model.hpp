#pragma once
// An independent model of SPEC section 3 (the decision), written from the spec text for `llmchaos
// explore`. It shares no code with the client's classifier or decision: it reads what the mock did (the
// ledger: fault kind, status, how the attempt ended, content events sent) and the case (policy, script,
// request), derives the owner from the fault kind by SPEC section 2's table and the commit state from
// what was visible before the fault, and applies the seven rules of SPEC section 3 in order.
//
// Where SPEC section 3 has no input for what decides a point, the model says so instead of guessing: once
// failures on a route reach its breaker's threshold, a breaker may be open (breakers are the client's own
// design, not the spec's), so no later point of the case is judged. It reads histories of virtual-time
// runs (every attempt finished, times exact).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "llmchaos/core/types.hpp"
#include "llmchaos/harness/case.hpp"
#include "llmchaos/harness/checker.hpp"

namespace llmchaos::harness {

struct SpecPoint {
  int point = 0;          // 1-based, across the case, in the order the failures happened
  int request = 0;        // 0-based request of the case
  int delivery = 0;       // 0 = the first delivery, 1.. = queue redeliveries
  std::uint64_t seq = 0;  // the failed ledger entry
  std::string route;
  int route_attempt = 0;  // the entry's attempt index on its route
  FaultKind fault = FaultKind::ok;
  Owner owner = Owner::none;
  CommitState commit = CommitState::none;
  std::optional<Action> action;  // nullopt: not judged (see `why`)
  std::string target;            // fallback: the route SPEC 3 picks
  int rule = 0;                  // 0..7 (0: resume)
  std::string why;               // the rule and the inputs it looked at, in words
};

// Every failure point of the history as SPEC section 3 decides it. `time_scale` is the one the case ran at
// (the policy in `c` is unscaled, the ledger's times are scaled).
std::vector<SpecPoint> spec_points(const Case& c, const History& h, double time_scale);

struct SpecDisagreement {
  int point = 0;  // the model's failure point (a failure only the stack saw: the point it would have been)
  std::string message;
};
// Where the stack's decision log and the model differ, one message per point ("point 2: primary attempt 1
// (overloaded, owner transient, commit none): SPEC 3 says queue (rule 6: ...); the stack did retry (4:
// ...)"). Empty: they agree wherever the model judged.
std::vector<SpecDisagreement> compare_with_spec(const History& h, const std::vector<SpecPoint>& model);

}  // namespace llmchaos::harness
