// The one table of checks, in report order. To add one: write it in its family's file (checks_*.cpp: what
// it judges), define its CheckSpec there beside it, declare it and list it here.
#include <iterator>

#include "checker_ctx.hpp"

namespace llmchaos::harness::detail {

// checks_expectations.cpp, checks_budget.cpp, checks_history.cpp, checks_conduct.cpp, checks_retry.cpp,
// checks_sequence.cpp, checks_tier.cpp, checks_cooldown.cpp.
extern const CheckSpec action_check, expect_at_check, action_agreement_check, expect_outcome_check,
    expect_attempts_check, expect_share_check, max_total_attempts_check, max_elapsed_ms_check,
    max_extra_cost_usd_check, no_duplicate_commit_check, timeline_check, no_hang_check,
    no_truncated_success_check, retry_after_honoured_check, backoff_bounds_check, no_hammering_check,
    max_wall_ms_check, alive_after_check, names_serving_route_check, served_during_outage_check,
    recovered_within_check, max_outage_attempts_check, expect_rate_limited_check, within_tier_limits_check,
    cooldown_by_owner_check, cooldown_extends_check, caller_timeout_no_cooldown_check,
    fallback_without_waiting_check, retry_after_forwarded_check;

namespace {
const CheckSpec* const check_table[] = {
    &action_check,
    &expect_at_check,
    &action_agreement_check,
    &expect_outcome_check,
    &expect_attempts_check,
    &expect_share_check,
    &max_total_attempts_check,
    &max_elapsed_ms_check,
    &max_extra_cost_usd_check,
    &no_duplicate_commit_check,
    &timeline_check,
    &no_hang_check,
    &no_truncated_success_check,
    &retry_after_honoured_check,
    &backoff_bounds_check,
    &no_hammering_check,
    &max_wall_ms_check,
    &alive_after_check,
    &names_serving_route_check,
    &served_during_outage_check,
    &recovered_within_check,
    &max_outage_attempts_check,
    &expect_rate_limited_check,
    &within_tier_limits_check,
    &cooldown_by_owner_check,
    &cooldown_extends_check,
    &caller_timeout_no_cooldown_check,
    &fallback_without_waiting_check,
    &retry_after_forwarded_check,
};
}  // namespace

std::span<const CheckSpec* const> all_checks() {
  return check_table;
}

}  // namespace llmchaos::harness::detail

namespace llmchaos::harness {

std::vector<std::string_view> check_names() {
  std::vector<std::string_view> names;
  for (const auto* check : detail::all_checks()) names.push_back(check->name);
  return names;
}

}  // namespace llmchaos::harness
