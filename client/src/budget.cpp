#include "llmchaos/client/budget.hpp"

#include <algorithm>

namespace llmchaos::client {

BudgetLimits BudgetLimits::from(const WorkflowPolicy& workflow) {
  return {workflow.max_total_attempts, workflow.max_elapsed_ms, workflow.max_extra_cost_usd};
}

BudgetLedger::BudgetLedger(BudgetLimits limits, double start_ms) : limits_(limits), start_ms_(start_ms) {}

void BudgetLedger::record_attempt(AttemptKind kind, double cost_usd) {
  if (attempts_used_ > 0) extra_cost_usd_ += cost_usd;
  ++attempts_used_;
  ++by_kind_[static_cast<std::size_t>(kind)];
}

int BudgetLedger::attempts_left() const {
  return std::max(0, limits_.max_attempts - attempts_used_);
}

double BudgetLedger::time_left_ms(double now_ms) const {
  return std::max(0.0, limits_.max_elapsed_ms - elapsed_ms(now_ms));
}

double BudgetLedger::cost_left_usd() const {
  return std::max(0.0, limits_.max_extra_cost_usd - extra_cost_usd_);
}

BudgetView BudgetLedger::view(double now_ms) const {
  return {attempts_used_,       attempts_left(), elapsed_ms(now_ms),
          time_left_ms(now_ms), extra_cost_usd_, cost_left_usd()};
}

}  // namespace llmchaos::client
