// payment_402: 402, credits exhausted (billing_error)
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"body"};  // a named real body of the dialect
Plan plan(const FaultInput& in) {
  return plan_blocks::error_plan(in, FaultKind::payment_402, ErrorKind::payment);
}
}  // namespace

extern const FaultSpec payment_402_fault = {
    .kind = FaultKind::payment_402,
    .params = params,
    .plan = plan,
    .summary = "402, credits exhausted (billing_error)",
    .error_body = ErrorKind::payment,
};

}  // namespace llmchaos::mock
