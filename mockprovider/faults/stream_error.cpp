// stream_error: 200, the stream starts, cut_after_events content events (default 1), then the dialect's
// in-stream error event and a clean HTTP end. A plain request gets the same error as a pre-response
// status (OpenAI 500, Anthropic 529, Gemini 503). `body` names the error where the dialect has several
// (Bedrock's exception frames: throttlingException, ...), streamed and plain alike.
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"cut_after_events", "body"};

Plan plan(const FaultInput& in) {
  if (!in.request.stream)
    return plan_blocks::error_plan(in, FaultKind::stream_error, ErrorKind::stream_interrupted);
  Plan p = plan_blocks::partial_stream(in, FaultKind::stream_error, plan_blocks::cut_after(in, 1), {},
                                       StreamEnd::complete);
  const auto named = in.dialect.named_stream_error_frame;
  p.frames.push_back(named && in.step.body ? named(*in.step.body)
                                           : in.dialect.stream_error_frame(in.answer, p.frames.size()));
  return p;
}

void draw(ExploreDraw& d) {
  plan_blocks::draw_cut_after_events(d);
}
}  // namespace

extern const FaultSpec stream_error_fault = {
    .kind = FaultKind::stream_error,
    .params = params,
    .plan = plan,
    .summary = "200, N content events, then an in-stream error event",
    .traits = {.in_band = InBand::always, .breaks_stream = true, .explore_draw = draw},
    .error_body = ErrorKind::stream_interrupted,
};

}  // namespace llmchaos::mock
