// stream_stall: 200, cut_after_events content events (default 1), then silence for stall_ms (default
// 30000), then the connection closes mid body. A plain request stalls half way through its body.
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"cut_after_events", "stall_ms"};
constexpr double default_stall_ms = 30000;

Plan plan(const FaultInput& in) {
  Plan p = in.request.stream
               ? plan_blocks::partial_stream(in, FaultKind::stream_stall, plan_blocks::cut_after(in, 1), {},
                                             StreamEnd::stall_then_abort)
               : plan_blocks::truncated_body(in, FaultKind::stream_stall, StreamEnd::stall_then_abort);
  p.stall_ms = plan_blocks::scaled(in, in.step.stall_ms.value_or(default_stall_ms));
  return p;
}

void draw(ExploreDraw& d) {
  plan_blocks::draw_cut_after_events(d);
  d.param("stall_ms", d.maybe(0.5) ? d.within() : d.beyond());
}
}  // namespace

extern const FaultSpec stream_stall_fault = {
    .kind = FaultKind::stream_stall,
    .params = params,
    .plan = plan,
    .summary = "200, N content events, silence for stall_ms, then close",
    .traits = {.in_band = InBand::always, .breaks_stream = true, .explore_draw = draw},
};

}  // namespace llmchaos::mock
