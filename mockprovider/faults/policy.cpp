// policy: a content-policy refusal. Plain requests get the dialect's 400; streamed ones get a 200 stream
// of cut_after_events tokens (default 0) that finishes with content_filter / refusal / SAFETY.
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"cut_after_events"};

Plan plan(const FaultInput& in) {
  if (!in.request.stream) return plan_blocks::error_plan(in, FaultKind::policy, ErrorKind::policy);
  Answer stopped = in.answer;
  stopped.finish = Finish::content_filter;
  stopped.tool_name.clear();
  stopped.tokens.resize(static_cast<std::size_t>(plan_blocks::cut_after(in, 0)));
  return plan_blocks::answer_plan(in, FaultKind::policy, stopped);
}

void draw(ExploreDraw& d) {
  plan_blocks::draw_cut_after_events(d);
}
}  // namespace

extern const FaultSpec policy_fault = {
    .kind = FaultKind::policy,
    .params = params,
    .plan = plan,
    .summary = "400 content-policy refusal, or a streamed content_filter finish",
    .traits = {.in_band = InBand::always, .breaks_stream = true, .explore_draw = draw},
};

}  // namespace llmchaos::mock
