// server_500_context: 500 whose message names the input (context too long)
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
Plan plan(const FaultInput& in) {
  return plan_blocks::error_plan(in, FaultKind::server_500_context, ErrorKind::server_context);
}
}  // namespace

extern const FaultSpec server_500_context_fault = {
    .kind = FaultKind::server_500_context,
    .params = {},
    .plan = plan,
    .summary = "500 whose message names the input (context too long)",
};

}  // namespace llmchaos::mock
