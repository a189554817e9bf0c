// bad_request: 400, the input is too long for the model (context length exceeded)
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
Plan plan(const FaultInput& in) {
  return plan_blocks::error_plan(in, FaultKind::bad_request, ErrorKind::bad_request);
}
}  // namespace

extern const FaultSpec bad_request_fault = {
    .kind = FaultKind::bad_request,
    .params = {},
    .plan = plan,
    .summary = "400, the input is too long for the model (context length exceeded)",
};

}  // namespace llmchaos::mock
