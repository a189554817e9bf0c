// quota_429: 429 with the dialect's quota/billing body (insufficient_quota, RESOURCE_EXHAUSTED), no
// retry-after
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"body"};  // a named real body of the dialect
Plan plan(const FaultInput& in) {
  return plan_blocks::error_plan(in, FaultKind::quota_429, ErrorKind::quota);
}
}  // namespace

extern const FaultSpec quota_429_fault = {
    .kind = FaultKind::quota_429,
    .params = params,
    .plan = plan,
    .summary =
        "429 with the dialect's quota/billing body (insufficient_quota, RESOURCE_EXHAUSTED), no retry-after",
    .error_body = ErrorKind::quota,
};

}  // namespace llmchaos::mock
