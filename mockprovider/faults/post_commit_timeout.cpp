// post_commit_timeout: the attempt is ledgered as committed before the hold, then no byte is sent until
// the client closes, hold_ms passes (default 30000) or the server stops.
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"hold_ms"};

Plan plan(const FaultInput& in) {
  return plan_blocks::hold_plan(in, FaultKind::post_commit_timeout, true);
}
}  // namespace

extern const FaultSpec post_commit_timeout_fault = {
    .kind = FaultKind::post_commit_timeout,
    .params = params,
    .plan = plan,
    .summary = "committed in the ledger, then silence (hold)",
    .traits = {.in_band = InBand::always, .explore_latency = false},
};

}  // namespace llmchaos::mock
