// ok: the healthy answer, plain or streamed one event per word (or a tool call, see fault.hpp).
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
Plan plan(const FaultInput& in) {
  return plan_blocks::answer_plan(in, FaultKind::ok);
}
}  // namespace

extern const FaultSpec ok_fault = {
    .kind = FaultKind::ok,
    .params = {},
    .plan = plan,
    .summary = "the healthy answer, plain or streamed one event per word",
    .traits = {.keeps_healthy_stream = true},
};

}  // namespace llmchaos::mock
