// Markdown: a summary fit for a pull-request comment. Totals, the metric split (each outcome apart),
// what failed with expected vs observed and the rule, and the action changes vs the baseline. Passing
// cases are counted, not listed. The whole stays under max_markdown_chars whatever the run's size
// (GitHub's comment limit is 65,536): failures and changes are shown in full while they fit, and the
// rest are counted with a pointer to report.html / report.json.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <ostream>
#include <sstream>

#include "text.hpp"
#include "writers.hpp"

namespace llmchaos::reports::detail {
namespace {

using harness::CaseResult;
using harness::Verdict;

constexpr std::size_t max_detailed_cases = 10;  // timelines shown in full; the rest are listed only
constexpr std::size_t max_timeline_lines = 60;
constexpr std::size_t reserve_chars = 2'000;  // kept for the closing lines and the per-folder counts

// Text added block by block, each only if it fits in what is left; what did not fit is counted.
struct Budget {
  std::string text;
  std::size_t limit;
  bool add(const std::string& block, std::size_t keep = 0) {
    if (text.size() + block.size() + keep > limit) return false;
    text += block;
    return true;
  }
};

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
  const int not_run = run.not_applicable();
  if (bad == 0 && not_run == 0)
    out << fmt::format("## llmchaos: all {} cases passed\n\n", total);
  else if (bad == 0)
    out << fmt::format("## llmchaos: all {} cases run passed, {} not run (n/a)\n\n", total - not_run,
                       not_run);
  else
    out << fmt::format("## llmchaos: {} of {} cases did not pass\n\n", bad, total);
  out << fmt::format("**{} passed · {} failed · {} unknown{}** · seed {} · driver {} · time scale {} · {}",
                     run.passed(), run.failed(), run.unknown(),
                     run.not_applicable() ? fmt::format(" · {} n/a", run.not_applicable()) : std::string(),
                     code(std::to_string(run.seed)), code(run.driver), code(format_number(run.time_scale)),
                     format_ms(run.duration_ms));
  if (!run.started_at.empty()) out << " · " << md_inline(run.started_at);
  if (run.shard.sharded()) out << fmt::format(" · shard {}/{}", run.shard.index, run.shard.count);
  if (run.merged_shards > 0) out << fmt::format(" · merged from {} shards", run.merged_shards);
  out << " · llmchaos " << md_inline(run.tool_version);
  if (const auto v =
          std::count_if(run.cases.begin(), run.cases.end(), [](const auto& c) { return c.virtual_time; }))
    out << fmt::format(" · {} exact_time case(s) ran under virtual time", v);
  if (!run.label.empty()) out << " · target " << md_inline(run.label);
  out << "\n\n";
  for (const auto& w : run.warnings) out << "> **warning:** " << md_inline(w) << "\n\n";
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
  if (c.verdict == Verdict::unknown || c.verdict == Verdict::na) {
    out << md_inline(verdict_summary(c)) << " (expected " << code(to_string(c.expected)) << ")\n";
  } else {
    if (!c.reason.empty()) out << md_inline(c.reason) << ": ";
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
  if (!c.foreign.empty())
    out << fmt::format(
        "- foreign traffic: {} attempt(s) the mock saw that are not the case's requests (not counted)\n",
        c.foreign.size());
  if (c.virtual_time)
    out << "- ran under virtual time (an exact_time case, played on a virtual clock in this live run)\n";
  if (!c.file.empty())
    out << "- file " << code(c.file) << (c.policy_name.empty() ? "" : ", policy " + code(c.policy_name))
        << "\n";
  if (with_timeline && c.verdict != Verdict::na)  // a case not run has no timeline to show
    out << "\n<details><summary>Timeline</summary>\n\n"
        << md_code_block(capped_lines(timeline_text(c), max_timeline_lines)) << "\n</details>\n";
  out << "\n";
}

void write_group(Budget& out, const harness::RunResult& run, Verdict verdict, std::string_view title,
                 std::size_t& detailed, std::size_t keep) {
  std::vector<const CaseResult*> group;
  for (const auto& c : run.cases)
    if (c.verdict == verdict) group.push_back(&c);
  if (group.empty()) return;
  out.add(fmt::format("### {} ({})\n\n", title, group.size()));
  std::size_t shown = 0;
  for (const auto* c : group) {
    std::ostringstream block;
    write_case_detail(block, *c, detailed < max_detailed_cases);
    if (!out.add(block.str(), keep)) break;
    ++detailed;
    ++shown;
  }
  if (shown < group.size())
    out.add(fmt::format(
        "... and {} more not shown here (this comment's size limit): report.html and report.json hold "
        "every one.\n\n",
        group.size() - shown));
  if (detailed > max_detailed_cases)
    out.add(fmt::format("Timelines are shown for the first {} cases only.\n\n", max_detailed_cases));
}

void write_baseline(Budget& out, const harness::RunResult& run) {
  if (run.baseline.empty() && run.baseline_changes.empty()) return;
  const std::string against = run.baseline.empty() ? "" : " " + code(run.baseline);
  if (run.baseline_changes.empty()) {
    out.add("### Action changes vs baseline\n\nNo case changed its action vs baseline" + against + ".\n\n");
    return;
  }
  out.add(fmt::format("### Action changes vs baseline ({})\n\n", run.baseline_changes.size()));
  if (!against.empty()) out.add("Compared with" + against + ".\n\n");
  out.add("| case | before | after |\n| --- | --- | --- |\n");
  std::size_t shown = 0;
  for (const auto& ch : run.baseline_changes) {
    if (!out.add("| " + md_inline(ch.case_name) + " | " + code(actions_text(ch.before_all, ch.before)) +
                     " | " + code(actions_text(ch.after_all, ch.after)) + " |\n",
                 reserve_chars))
      break;
    ++shown;
  }
  out.add("\n");
  if (shown < run.baseline_changes.size())
    out.add(
        fmt::format("... and {} more changes not shown here (this comment's size limit): report.html and "
                    "report.json hold every one.\n\n",
                    run.baseline_changes.size() - shown));
}

// Traffic the mock saw in a case's namespace that is not the case's requests (a drain a proxy
// forwarded, a health probe): listed for every case, passing ones too, and never counted.
void write_foreign(Budget& out, const harness::RunResult& run) {
  std::vector<const CaseResult*> with;
  for (const auto& c : run.cases)
    if (!c.foreign.empty()) with.push_back(&c);
  if (with.empty()) return;
  out.add(fmt::format(
      "### Foreign traffic ({} case{}: not the case's requests, not counted as their attempts)\n\n",
      with.size(), with.size() == 1 ? "" : "s"));
  out.add("| case | route | path | Idempotency-Key | status |\n| --- | --- | --- | --- | ---: |\n");
  for (const auto* c : with)
    for (const auto& e : c->foreign)
      if (!out.add("| " + md_inline(case_label(*c)) + " | " + code(e.route) + " | " + code(e.path) + " | " +
                       (e.idempotency_key.empty() ? std::string("-") : code(e.idempotency_key)) + " | " +
                       std::to_string(e.status) + " |\n",
                   reserve_chars))
        break;
  out.add("\n");
}

// Passing cases are counted per folder, never listed (a run of any size fits a comment).
void write_passing(Budget& out, const harness::RunResult& run) {
  std::map<std::string, std::array<int, 4>> by_folder;  // pass, fail, unknown, n/a (Verdict's order)
  for (const auto& c : run.cases) ++by_folder[suite_name(c)][static_cast<std::size_t>(c.verdict)];
  std::string table =
      fmt::format("<details><summary>{} passing cases, counted by folder</summary>\n\n", run.passed());
  table += "| folder | passed | failed | unknown |\n| --- | ---: | ---: | ---: |\n";
  std::size_t rows = 0;
  for (const auto& [folder, n] : by_folder) {
    const auto row = fmt::format("| {} | {} | {} | {} |\n", md_inline(folder), n[0], n[1], n[2]);
    if (table.size() + row.size() + 200 > reserve_chars) break;
    table += row;
    ++rows;
  }
  if (rows < by_folder.size()) table += fmt::format("\n... and {} more folders.\n", by_folder.size() - rows);
  table +=
      "\nEvery case, passing ones included, is in report.html, report.json and junit.xml.\n\n</details>\n";
  out.add(table);
}

}  // namespace

void write_markdown(const harness::RunResult& run, const Options& /*options*/, std::ostream& out) {
  Budget md{{}, max_markdown_chars};
  std::ostringstream head;
  write_header(head, run);
  write_split(head, run);
  md.add(head.str());
  // The changes get what the failures leave, but never less than half the room.
  const std::size_t changes_room = std::min(max_markdown_chars / 2, 80 * run.baseline_changes.size() + 300);
  std::size_t detailed = 0;
  write_group(md, run, Verdict::fail, "Failures", detailed, changes_room + reserve_chars);
  write_group(md, run, Verdict::unknown, "Unknown (hang or crash)", detailed, changes_room + reserve_chars);
  write_group(md, run, Verdict::na,
              "Not applicable, not run (the target lacks a capability the case needs, or the case needs "
              "--virtual-time)",
              detailed, changes_room + reserve_chars);
  write_foreign(md, run);
  write_baseline(md, run);
  write_passing(md, run);
  out << md.text;
}

}  // namespace llmchaos::reports::detail
