#pragma once
// The building blocks fault kinds compose their plans from (faults/*.cpp). Pure functions.
#include <optional>
#include <vector>

#include "llmchaos/mockprovider/fault.hpp"

namespace llmchaos::mock::plan_blocks {

double scaled(const FaultInput& in, double ms);
// The dialect's healthy answer (plain body or the whole stream) with the step's latency and pacing.
Plan answer_plan(const FaultInput& in, FaultKind kind);
Plan answer_plan(const FaultInput& in, FaultKind kind, const Answer& answer);
// The dialect's error reply; status overridable by the step; retry headers when the step asks, or
// `default_retry_after_ms` when it gives no hint (rate_429 always sends one).
Plan error_plan(const FaultInput& in, FaultKind kind, ErrorKind error, std::string_view detail = {},
                std::optional<double> default_retry_after_ms = std::nullopt);
// retry-after (whole seconds, rounded up) and retry-after-ms.
void add_retry_after(Plan& plan, double ms);  // the default form (both)
// The step's retry hint in `form` (script.hpp); `unix_now_ms` dates the HTTP-date and RFC 3339 forms.
void add_retry_hint(Plan& plan, double ms, RetryAfterForm form, double unix_now_ms);
// Content events before a stream fault: the step's cut_after_events (else `fallback`), at most all.
int cut_after(const FaultInput& in, int fallback);
// explore's draw of cut_after_events: anywhere from before the first content event to after the last.
inline void draw_cut_after_events(ExploreDraw& d) {
  d.param("cut_after_events", d.between(0, d.tokens));
}
// A stream of the head and the first `n` content frames, then `extra`, ending with `end`.
Plan partial_stream(const FaultInput& in, FaultKind kind, int n, std::vector<SseFrame> extra, StreamEnd end);
// A plain answer whose body stops half way: the shape a cut takes on a non-streamed request.
Plan truncated_body(const FaultInput& in, FaultKind kind, StreamEnd end);
// A plan that sends nothing and holds the connection.
Plan hold_plan(const FaultInput& in, FaultKind kind, bool committed);
// A streamed plan as one JSON array (Gemini without alt=sse): each frame's data becomes an element, in
// the same frames (so cuts, stalls and pacing stay where they were), "]" closing a stream that ends
// cleanly; content-type application/json. Other plans are left alone.
void as_json_array(Plan& plan);

}  // namespace llmchaos::mock::plan_blocks
