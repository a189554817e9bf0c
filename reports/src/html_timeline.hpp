#pragma once
// The per-case timeline of the HTML report as inline SVG: attempts as bars on a time axis, coloured by
// how they ended, failure points marked with their action. Pure SVG: no script, no external fetch.
#include <string>

#include "llmchaos/results/result.hpp"

namespace llmchaos::reports::detail {

// Colour classes of an attempt bar (CSS classes a-ok, a-retryable, ...), shared with the legend.
enum class AttemptClass { ok, retryable, fatal, unknown, failed };
std::string_view attempt_class_name(AttemptClass k);   // "ok", "retryable", ...
std::string_view attempt_class_label(AttemptClass k);  // legend text

// One row per route for a single request, one row per request for a sequence; a case with no decision
// log (a hang) is drawn from the mock's ledger. The axis is in scripted ms (what the case file says:
// recorded time / time_scale), the real time beside it when the run was scaled.
std::string timeline_svg(const harness::CaseResult& c, double time_scale);
// The same drawing as compact JSON, for the page's script to draw on demand (drawTimeline in html.cpp
// reads exactly these keys): {"r": rows, "b": bars [row, start, end, class, committed, title, label],
// "m": marks [row, at, point, action, text, title], "l": waits [from_row, to_row, from, to],
// "e": ends [row, outcome], "x": extent, "t": ticks [at, label], "n": axis note (null: the usual one,
// G.NOTE)}, every time in whole tenths of a ms; null when no attempt reached the mock.
std::string timeline_json(const harness::CaseResult& c, double time_scale);
// "var G = {...}, OUTCOMES = {...};": the drawing's geometry for the page's script (the numbers render()
// uses) and the outcomes' labels.
std::string timeline_geometry_js(double time_scale);

}  // namespace llmchaos::reports::detail
