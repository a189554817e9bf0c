// no_terminator: the whole stream, properly ended at the HTTP level, without the dialect's end sentinel
// ([DONE], message_stop, Gemini's final finishReason frame). A plain request gets the normal answer.
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
Plan plan(const FaultInput& in) {
  Plan p = plan_blocks::answer_plan(in, FaultKind::no_terminator);
  if (!p.streamed) return p;
  auto parts = in.dialect.render_stream(in.answer);
  p.frames.clear();
  for (auto* part : {&parts.head, &parts.content, &parts.tail})
    for (auto& f : *part) p.frames.push_back(std::move(f));
  return p;
}
}  // namespace

extern const FaultSpec no_terminator_fault = {
    .kind = FaultKind::no_terminator,
    .params = {},
    .plan = plan,
    .summary = "a complete stream without the dialect's end sentinel",
};

}  // namespace llmchaos::mock
