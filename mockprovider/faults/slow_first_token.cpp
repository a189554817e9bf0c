// slow_first_token: headers at once, the first event only after first_token_ms (default 2000), then
// the normal stream. A plain request simply waits first_token_ms longer before its answer.
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"first_token_ms"};
constexpr double default_first_token_ms = 2000;

Plan plan(const FaultInput& in) {
  Plan p = plan_blocks::answer_plan(in, FaultKind::slow_first_token);
  const double wait = plan_blocks::scaled(in, in.step.first_token_ms.value_or(default_first_token_ms));
  if (p.streamed)
    p.first_event_ms = wait;
  else
    p.latency_ms += wait;
  return p;
}

void draw(ExploreDraw& d) {
  d.param("first_token_ms", d.maybe(0.5) ? d.within() : d.beyond());
}
}  // namespace

extern const FaultSpec slow_first_token_fault = {
    .kind = FaultKind::slow_first_token,
    .params = params,
    .plan = plan,
    .summary = "headers at once, the first event after first_token_ms",
    .traits = {.keeps_healthy_stream = true, .explore_draw = draw},
};

}  // namespace llmchaos::mock
