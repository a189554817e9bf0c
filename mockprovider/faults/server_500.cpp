// server_500: 500 with a bare server error (no detail)
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
Plan plan(const FaultInput& in) {
  return plan_blocks::error_plan(in, FaultKind::server_500, ErrorKind::server);
}
}  // namespace

extern const FaultSpec server_500_fault = {
    .kind = FaultKind::server_500,
    .params = {},
    .plan = plan,
    .summary = "500 with a bare server error (no detail)",
};

}  // namespace llmchaos::mock
