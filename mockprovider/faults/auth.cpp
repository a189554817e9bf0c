// auth: 401 with the dialect's authentication error (status = 403 for a permission error)
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
Plan plan(const FaultInput& in) {
  return plan_blocks::error_plan(in, FaultKind::auth, ErrorKind::auth);
}
}  // namespace

extern const FaultSpec auth_fault = {
    .kind = FaultKind::auth,
    .params = {},
    .plan = plan,
    .summary = "401 with the dialect's authentication error (status = 403 for a permission error)",
};

}  // namespace llmchaos::mock
