// payment_402: 402, credits exhausted (billing_error)
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
Plan plan(const FaultInput& in) { return detail::error_plan(in, FaultKind::payment_402, ErrorKind::payment); }
}  // namespace

extern const FaultSpec payment_402_fault = {FaultKind::payment_402, {}, plan, "402, credits exhausted (billing_error)"};

}  // namespace llmchaos::mock
