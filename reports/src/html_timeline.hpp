#pragma once
// The per-case timeline of the HTML report as inline SVG: attempts as bars on a time axis, coloured by
// how they ended, failure points marked with their action. Pure SVG: no script, no external fetch.
#include <string>

#include "llmchaos/results/result.hpp"
#include "text_table.hpp"

namespace llmchaos::reports::detail {

// Colour classes of an attempt bar (CSS classes a-ok, a-retryable, ...), shared with the legend.
enum class AttemptClass { ok, retryable, fatal, unknown, failed };
std::string_view attempt_class_name(AttemptClass k);   // "ok", "retryable", ...
std::string_view attempt_class_label(AttemptClass k);  // legend text

// One row per route for a single request, one row per request for a sequence; a case with no decision
// log (a hang) is drawn from the mock's ledger. The axis is in scripted ms (what the case file says:
// recorded time / time_scale), the real time beside it when the run was scaled.
std::string timeline_svg(const harness::CaseResult& c, double time_scale);
// The same drawing as compact JSON, for the page's script to draw on demand (unpack() in html.cpp
// reads it for drawTimeline): [rows, bars, marks, waits, ends, extent, ticks, note] with every string
// as its index in strings and every tooltip as the indexes of its parts (" · " between them):
// rows [row name], bars [row, start, end, class, committed, tooltip, label], marks [row, at, point,
// action, text, tooltip], waits [from_row, to_row, from, to], ends [row, outcome], ticks [[at, label]],
// note (null: the usual one, G.NOTE); every time in whole tenths of a ms; null when no attempt
// reached the mock.
std::string timeline_data(const harness::CaseResult& c, double time_scale, TextTable& strings);
// "var G = {...}, OUTCOMES = {...};": the drawing's geometry for the page's script (the numbers render()
// uses) and the outcomes' labels.
std::string timeline_geometry_js(double time_scale);

}  // namespace llmchaos::reports::detail
