#pragma once
// The budget ledger of one workflow request (SPEC 3): ONE ledger across every layer, so the initial
// attempt, retries, fallbacks and queue redeliveries all draw on the same attempts, time and cost.
// Plain data over times passed in by the caller (read from the injected Clock); no I/O.
#include <array>
#include <cstddef>
#include <limits>

#include "llmchaos/client/policy.hpp"
#include "llmchaos/core/decision_log.hpp"  // AttemptKind
#include "llmchaos/core/types.hpp"

namespace llmchaos::client {

struct BudgetLimits {
  int max_attempts = 3;
  double max_elapsed_ms = std::numeric_limits<double>::infinity();
  double max_extra_cost_usd = std::numeric_limits<double>::infinity();
  static BudgetLimits from(const WorkflowPolicy& workflow);
};

// What is left at one instant: exactly the numbers the decision looks at.
struct BudgetView {
  int attempts_used = 0;
  int attempts_left = 0;
  double elapsed_ms = 0;
  double time_left_ms = 0;  // never negative
  double extra_cost_usd = 0;
  double cost_left_usd = 0;  // never negative
};

class BudgetLedger {
 public:
  // `start_ms`: the request's start on the caller's clock.
  BudgetLedger(BudgetLimits limits, double start_ms);

  // Count one attempt before it is sent. The first attempt of the request is paid for by the caller
  // anyway, so only the cost of every later attempt is "extra".
  void record_attempt(AttemptKind kind, double cost_usd);

  int attempts_used() const { return attempts_used_; }
  int attempts_left() const;
  int attempts_of(AttemptKind kind) const { return by_kind_[static_cast<std::size_t>(kind)]; }
  double elapsed_ms(double now_ms) const { return now_ms - start_ms_; }
  double time_left_ms(double now_ms) const;
  double extra_cost_usd() const { return extra_cost_usd_; }
  double cost_left_usd() const;
  double start_ms() const { return start_ms_; }
  const BudgetLimits& limits() const { return limits_; }
  BudgetView view(double now_ms) const;

 private:
  BudgetLimits limits_;
  double start_ms_;
  int attempts_used_ = 0;
  std::array<int, 4> by_kind_{};
  double extra_cost_usd_ = 0;
};

}  // namespace llmchaos::client
