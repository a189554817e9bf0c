#pragma once
// The per-case timeline of the HTML report as inline SVG: attempts as bars on a time axis, coloured by
// how they ended, failure points marked with their action. Pure SVG: no script, no external fetch.
#include <string>

#include "llmchaos/harness/result.hpp"

namespace llmchaos::reports::detail {

// Colour classes of an attempt bar (CSS classes a-ok, a-retryable, ...), shared with the legend.
enum class AttemptClass { ok, retryable, fatal, unknown, failed };
std::string_view attempt_class_name(AttemptClass k);   // "ok", "retryable", ...
std::string_view attempt_class_label(AttemptClass k);  // legend text

// One row per route for a single request, one row per request for a sequence; a case with no decision
// log (a hang) is drawn from the mock's ledger.
std::string timeline_svg(const harness::CaseResult& c);

}  // namespace llmchaos::reports::detail
