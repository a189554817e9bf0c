#pragma once
// Text pieces every report format shares: cleaning and escaping, labels, and the plain-text attempt
// timeline (JUnit failure bodies and Markdown details print the same words).
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/results/result.hpp"

namespace llmchaos::reports::detail {

// Valid UTF-8 that XML 1.0 accepts: invalid byte sequences and U+FFFE/U+FFFF become U+FFFD, and C0
// control characters other than tab, LF and CR become a visible "\xNN" (a report must show them, and
// XML 1.0 cannot carry them even as character references).
std::string clean_text(std::string_view s);
// Only the UTF-8 repair of clean_text (for JSON, which can carry control characters escaped).
std::string valid_utf8(std::string_view s);

// clean_text plus escaping for XML and HTML. In attributes, tab/LF/CR become character references so
// a parser's attribute normalisation keeps them.
std::string markup_escape(std::string_view s, bool attribute = false);

// One line of Markdown inline text: clean, newlines folded, Markdown and HTML punctuation escaped
// (safe inside table cells).
std::string md_inline(std::string_view s);
// An inline code span: literal inside (no backslash escapes), safe in a table cell.
std::string md_code(std::string_view s);
// A fenced code block that cannot be closed early by backticks in `content`.
std::string md_code_block(std::string_view content, std::string_view info = "text");

std::string format_ms(double ms);       // "12.3 ms", "2.50 s"
std::string format_seconds(double ms);  // "0.123" (JUnit time attributes)
std::string format_number(double v);    // shortest round-trip form; "null" when not finite

std::string_view outcome_label(Outcome o);  // "primary success", ...
// "rule 4: transient/rate failure, ..." for a failure point. The stack's rule text starts with its
// number ("4: ..."), said once here; an outside target may report the number alone ("rule 4").
std::string rule_label(const client::FailurePoint& fp);

// Where each failure point of a log sits: the index of the attempt it follows, or -1 before any
// attempt. A point with no attempt of its own (breaker open, budget spent: attempt = -1) sits with
// the point before it.
std::vector<int> failure_anchors(const client::DecisionLog& log);
// "request 3", "request 3 · redelivery 1", with the start offset when the harness recorded it.
std::string request_label(const harness::CaseResult& c, std::size_t log_index);

// How the mock saw a ledger entry end, in words: "completed at 12.0 ms", "held, client gave up at
// 200.1 ms" (a hold shorter than planned), "held 1.00 s, closed by the mock at 1.02 s", "client gave up
// at 200.4 ms", "still open when the case ended" (never finished).
std::string ledger_end_label(const LedgerEntry& e);

// A case's description as the reports carry it: at most description_limit bytes (cut on a UTF-8
// boundary), a longer one ending in a marker that says it was cut and at what size.
inline constexpr std::size_t description_limit = 4096;
std::string report_description(std::string_view description);

// "folder/name" or just the name when the case sits at the top of cases/.
std::string case_label(const harness::CaseResult& c);
std::string suite_name(const harness::CaseResult& c);  // folder, "cases" for the top level

// "queue" or, when every point is known, "retry → fallback" (baseline changes).
std::string actions_text(const std::vector<Action>& all, Action first);

// Total requests in the split and a request's share of it ("25.0%").
int split_total(const std::map<Outcome, int>& split);
std::string percent(int part, int whole);

// The one-line reason a case did not pass: "expected fallback, observed retry; failed: max_total_attempts".
std::string verdict_summary(const harness::CaseResult& c);
// Names and messages of the checks that failed.
std::vector<const harness::CheckResult*> failed_checks(const harness::CaseResult& c);

// A multi-line account of a case: expected vs observed, points, failed checks, then the timeline of
// every request (attempts, failure points with their action and rule) and the mock's ledger.
std::string case_details_text(const harness::CaseResult& c);
std::string timeline_text(const harness::CaseResult& c);

// Time-axis extent of a case's decision logs: the latest attempt end, wait or elapsed time (>= 1 ms).
double timeline_extent_ms(const harness::CaseResult& c);

}  // namespace llmchaos::reports::detail
