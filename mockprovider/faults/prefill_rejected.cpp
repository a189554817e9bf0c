// prefill_rejected: 400 when the request's last message is an assistant prefill (a capability the route
// lacks); a request without a prefill gets the healthy answer (ledgered as ok).
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
Plan plan(const FaultInput& in) {
  if (!in.request.prefill) return plan_blocks::answer_plan(in, FaultKind::ok);
  return plan_blocks::error_plan(in, FaultKind::prefill_rejected, ErrorKind::prefill);
}
}  // namespace

extern const FaultSpec prefill_rejected_fault = {
    .kind = FaultKind::prefill_rejected,
    .params = {},
    .plan = plan,
    .summary = "400 when the last message is an assistant prefill",
};

}  // namespace llmchaos::mock
