// connect_reset: the request is read, then the connection is reset (RST via SO_LINGER 0) before any
// response byte.
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
Plan plan(const FaultInput& in) {
  Plan p = plan_blocks::answer_plan(in, FaultKind::connect_reset);
  p.action = WireAction::reset_after_head;
  p.status = 0;
  p.body.clear();
  p.frames.clear();
  return p;
}
}  // namespace

extern const FaultSpec connect_reset_fault = {
    .kind = FaultKind::connect_reset,
    .params = {},
    .plan = plan,
    .summary = "RST after the request head, before any response byte",
    .traits = {.in_band = InBand::always, .explore_latency = false},
};

}  // namespace llmchaos::mock
