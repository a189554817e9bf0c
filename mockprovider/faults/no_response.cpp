// no_response: the same silent hold as post_commit_timeout, but nothing was committed (a stuck upstream).
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"hold_ms"};

Plan plan(const FaultInput& in) {
  return plan_blocks::hold_plan(in, FaultKind::no_response, false);
}
}  // namespace

extern const FaultSpec no_response_fault = {
    .kind = FaultKind::no_response,
    .params = params,
    .plan = plan,
    .summary = "silence (hold) with nothing committed",
    .traits = {.in_band = InBand::always, .explore_latency = false},
};

}  // namespace llmchaos::mock
