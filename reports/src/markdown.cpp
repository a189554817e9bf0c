// Markdown: a summary fit for a pull-request comment. Totals, the metric split (each outcome apart),
// what failed with expected vs observed and the rule, and the action changes vs the baseline. Long
// timelines are folded and capped so the comment stays under the forges' size limits.
#include <fmt/format.h>

#include <ostream>

#include "text.hpp"
#include "writers.hpp"

namespace llmchaos::reports::detail {
namespace {

using harness::CaseResult;
using harness::Verdict;

constexpr std::size_t max_detailed_cases = 10;  // timelines shown in full; the rest are listed only
constexpr std::size_t max_timeline_lines = 60;

std::string code(std::string_view s) {
  return md_code(s);
}

std::string capped_lines(const std::string& text, std::size_t max_lines) {
  std::size_t pos = 0;
  for (std::size_t line = 0; line < max_lines; ++line) {
    pos = text.find('\n', pos);
    if (pos == std::string::npos) return text;
    ++pos;
  }
  if (pos >= text.size()) return text;
  return text.substr(0, pos) + "... (cut here: the JSON and HTML reports hold the whole timeline)\n";
}

void write_header(std::ostream& out, const harness::RunResult& run) {
  const auto total = run.cases.size();
  const int bad = run.failed() + run.unknown();
  if (bad == 0)
    out << fmt::format("## llmchaos: all {} cases passed\n\n", total);
  else
    out << fmt::format("## llmchaos: {} of {} cases did not pass\n\n", bad, total);
  out << fmt::format("**{} passed · {} failed · {} unknown** · seed {} · driver {} · time scale {} · {}",
                     run.passed(), run.failed(), run.unknown(), code(std::to_string(run.seed)),
                     code(run.driver), code(format_number(run.time_scale)), format_ms(run.duration_ms));
  if (!run.started_at.empty()) out << " · " << md_inline(run.started_at);
  out << " · llmchaos " << md_inline(run.tool_version) << "\n\n";
}

void write_split(std::ostream& out, const harness::RunResult& run) {
  const auto split = run.outcome_split();
  const int total = split_total(split);
  out << fmt::format("### Outcomes of {} requests\n\n", total);
  out << "| outcome | requests | share |\n| --- | ---: | ---: |\n";
  for (const auto& [outcome, name] : enum_names<Outcome>::table) {
    const auto it = split.find(outcome);
    const int n = it == split.end() ? 0 : it->second;
    out << fmt::format("| {} | {} | {} |\n", outcome_label(outcome), n, percent(n, total));
  }
  out << "\nEach outcome is counted apart: recoveries, degraded and queued answers are not folded into one "
         "success rate.\n\n";
}

void write_case_detail(std::ostream& out, const CaseResult& c, bool with_timeline) {
  out << "**" << md_inline(case_label(c)) << "**: ";
  if (c.verdict == Verdict::unknown) {
    out << md_inline(verdict_summary(c)) << " (expected " << code(to_string(c.expected)) << ")\n";
  } else {
    out << "expected " << code(to_string(c.expected)) << ", observed " << code(to_string(c.observed));
    if (c.expected_outcome && c.expected_outcome != c.observed_outcome)
      out << "; outcome expected " << code(to_string(*c.expected_outcome)) << ", observed "
          << code(c.observed_outcome ? to_string(*c.observed_outcome) : "none");
    out << "\n";
  }
  for (const auto& p : c.points) {
    out << fmt::format("- point {}: ", p.point);
    if (p.expected != Action::none) out << "expected " << code(to_string(p.expected)) << ", ";
    out << "from the log " << code(to_string(p.from_log)) << ", from the ledger "
        << code(to_string(p.from_ledger));
    if (!p.rule.empty()) out << " (rule " << md_inline(p.rule) << ")";
    out << "\n";
  }
  for (const auto* check : failed_checks(c))
    out << "- check " << code(check->name) << ": " << md_inline(check->message) << "\n";
  if (!c.file.empty())
    out << "- file " << code(c.file) << (c.policy_name.empty() ? "" : ", policy " + code(c.policy_name))
        << "\n";
  if (with_timeline)
    out << "\n<details><summary>Timeline</summary>\n\n"
        << md_code_block(capped_lines(timeline_text(c), max_timeline_lines)) << "\n</details>\n";
  out << "\n";
}

void write_group(std::ostream& out, const harness::RunResult& run, Verdict verdict, std::string_view title,
                 std::size_t& detailed) {
  std::vector<const CaseResult*> group;
  for (const auto& c : run.cases)
    if (c.verdict == verdict) group.push_back(&c);
  if (group.empty()) return;
  out << fmt::format("### {} ({})\n\n", title, group.size());
  for (const auto* c : group) {
    write_case_detail(out, *c, detailed < max_detailed_cases);
    ++detailed;
  }
  if (detailed > max_detailed_cases)
    out << fmt::format("Timelines are shown for the first {} cases only.\n\n", max_detailed_cases);
}

void write_baseline(std::ostream& out, const harness::RunResult& run) {
  if (run.baseline.empty() && run.baseline_changes.empty()) return;
  const std::string against = run.baseline.empty() ? "" : " " + code(run.baseline);
  if (run.baseline_changes.empty()) {
    out << "### Action changes vs baseline\n\nNo case changed its action vs baseline" << against << ".\n\n";
    return;
  }
  out << fmt::format("### Action changes vs baseline ({})\n\n", run.baseline_changes.size());
  if (!against.empty()) out << "Compared with" << against << ".\n\n";
  out << "| case | before | after |\n| --- | --- | --- |\n";
  for (const auto& ch : run.baseline_changes)
    out << "| " << md_inline(ch.case_name) << " | " << code(actions_text(ch.before_all, ch.before)) << " | "
        << code(actions_text(ch.after_all, ch.after)) << " |\n";
  out << "\n";
}

void write_all_cases(std::ostream& out, const harness::RunResult& run) {
  out << fmt::format("<details><summary>All {} cases</summary>\n\n", run.cases.size());
  out << "| verdict | case | expected | observed | outcome | attempts |\n| --- | --- | --- | --- | --- | "
         "---: |\n";
  for (const auto& c : run.cases) {
    int attempts = 0;
    for (const auto& [route, n] : c.attempts_by_route) attempts += n;
    out << "| " << to_string(c.verdict) << " | " << md_inline(case_label(c)) << " | "
        << code(to_string(c.expected)) << " | " << code(to_string(c.observed)) << " | "
        << (c.observed_outcome ? md_inline(outcome_label(*c.observed_outcome)) : "-") << " | " << attempts
        << " |\n";
  }
  out << "\n</details>\n";
}

}  // namespace

void write_markdown(const harness::RunResult& run, const Options& /*options*/, std::ostream& out) {
  write_header(out, run);
  write_split(out, run);
  std::size_t detailed = 0;
  write_group(out, run, Verdict::fail, "Failures", detailed);
  write_group(out, run, Verdict::unknown, "Unknown (hang or crash)", detailed);
  write_baseline(out, run);
  write_all_cases(out, run);
}

}  // namespace llmchaos::reports::detail
