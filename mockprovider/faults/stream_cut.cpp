// stream_cut: 200, the stream starts, cut_after_events content events (default 1), then the TCP
// connection closes mid chunked body with no terminator. A plain request gets half its body, then the close.
#include "plan_builder.hpp"

namespace llmchaos::mock {
namespace {
constexpr std::string_view params[] = {"cut_after_events"};

Plan plan(const FaultInput& in) {
  if (!in.request.stream) return detail::truncated_body(in, FaultKind::stream_cut, StreamEnd::abort);
  return detail::partial_stream(in, FaultKind::stream_cut, detail::cut_after(in, 1), {}, StreamEnd::abort);
}

void draw(ExploreDraw& d) {
  detail::draw_cut_after_events(d);
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
