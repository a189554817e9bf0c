// malformed_event: a complete 200 stream in which content event N+1 (N = cut_after_events, default 1)
// is replaced by a frame whose data is not valid JSON. A plain request gets a truncated JSON body with a
// correct Content-Length. Where the dialect names malformed output by a stop reason (Bedrock's
// malformed_model_output, malformed_tool_use: a step's `body`), the answer is whole, with that stop reason.
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"cut_after_events", "body"};

// The whole answer, stopped for the reason the step names: nothing of it is usable.
Plan stopped_as_malformed(const FaultInput& in, std::string_view stop_reason) {
  Answer answer = in.answer;
  answer.stop_reason = stop_reason;
  Plan p = plan_blocks::answer_plan(in, FaultKind::malformed_event, answer);
  p.commits_when_sent = false;
  return p;
}

Plan plan(const FaultInput& in) {
  if (in.step.body) return stopped_as_malformed(in, *in.step.body);
  Plan p = plan_blocks::answer_plan(in, FaultKind::malformed_event);
  if (!p.streamed) {
    p.body.resize(p.body.size() / 2);
    p.commits_when_sent = false;  // nothing readable reached the client
    return p;
  }
  auto parts = in.dialect.render_stream(in.answer);
  const auto n = static_cast<std::size_t>(plan_blocks::cut_after(in, 1));
  auto& content = parts.content;
  if (n < content.size())
    content[n] = in.dialect.malformed_frame();
  else
    content.push_back(in.dialect.malformed_frame());
  p.frames.clear();
  for (auto* part : {&parts.head, &content, &parts.tail, &parts.terminator})
    for (auto& f : *part) p.frames.push_back(std::move(f));
  return p;
}

void draw(ExploreDraw& d) {
  plan_blocks::draw_cut_after_events(d);
  // Slow later events: the client hangs up before the next content event (cases/README.md).
  d.param("inter_event_ms", d.between(std::min(20.0, d.timeout_ms / 4), std::min(100.0, d.timeout_ms / 2)));
}
}  // namespace

extern const FaultSpec malformed_event_fault = {
    .kind = FaultKind::malformed_event,
    .params = params,
    .plan = plan,
    .summary = "200, SSE with event N+1 not valid JSON, otherwise complete",
    .traits = {.in_band = InBand::always,
               .breaks_stream = true,
               .explore_inter_event = false,
               .explore_draw = draw},
    .error_body = ErrorKind::malformed_output,
};

}  // namespace llmchaos::mock
