// stream_cut: 200, the stream starts, cut_after_events content events (default 1), then the TCP
// connection closes mid chunked body with no terminator: between two frames, or with `cut_mid_frame`
// inside the next one (its first half sent: a decoder must wait for the rest, as a binary event stream's
// length prefix makes it). A plain request gets half its body, then the close.
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"cut_after_events", "cut_mid_frame"};

// The first half of the frame that would have followed the n content frames (a content frame, or the
// first of the tail when all were sent).
std::vector<SseFrame> half_of_next(const FaultInput& in, int n) {
  auto parts = in.dialect.render_stream(in.answer);
  const auto i = static_cast<std::size_t>(n);
  const SseFrame* next = i < parts.content.size()    ? &parts.content[i]
                         : !parts.tail.empty()       ? &parts.tail.front()
                         : !parts.terminator.empty() ? &parts.terminator.front()
                                                     : nullptr;
  if (!next || next->bytes.size() < 2) return {};
  return {SseFrame{next->bytes.substr(0, next->bytes.size() / 2), false}};
}

Plan plan(const FaultInput& in) {
  if (!in.request.stream) return plan_blocks::truncated_body(in, FaultKind::stream_cut, StreamEnd::abort);
  const int n = plan_blocks::cut_after(in, 1);
  return plan_blocks::partial_stream(in, FaultKind::stream_cut, n,
                                     in.step.cut_mid_frame ? half_of_next(in, n) : std::vector<SseFrame>{},
                                     StreamEnd::abort);
}

void draw(ExploreDraw& d) {
  plan_blocks::draw_cut_after_events(d);
}
}  // namespace

extern const FaultSpec stream_cut_fault = {
    .kind = FaultKind::stream_cut,
    .params = params,
    .plan = plan,
    .summary = "200, N content events, then the connection closes with no terminator",
    .traits = {.in_band = InBand::always, .breaks_stream = true, .explore_draw = draw},
};

}  // namespace llmchaos::mock
