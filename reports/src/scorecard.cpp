// The scorecard (scorecard.hpp): rows are cases (by name, in the order the runs first list them),
// columns are targets; a cell is the verdict and the actions the ledger showed.
#include "llmchaos/reports/scorecard.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "text.hpp"

namespace llmchaos::reports {
namespace {

using detail::format_number;
using detail::markup_escape;
using detail::md_code_block;
using detail::md_inline;
using detail::timeline_text;

struct Row {
  std::string name;
  const harness::CaseResult* first = nullptr;     // for the expectation
  std::vector<const harness::CaseResult*> cells;  // per column, nullptr: not run there
};

std::vector<Row> rows_of(const std::vector<ScorecardColumn>& columns) {
  std::vector<Row> rows;
  std::map<std::string, std::size_t> index;
  for (std::size_t k = 0; k < columns.size(); ++k)
    for (const auto& c : columns[k].run->cases) {
      auto [it, added] = index.try_emplace(c.name, rows.size());
      if (added)
        rows.push_back(Row{c.name, &c, std::vector<const harness::CaseResult*>(columns.size(), nullptr)});
      rows[it->second].cells[k] = &c;
    }
  return rows;
}

std::string expected_text(const harness::CaseResult& c) {
  return std::string(to_string(c.expected)) +
         (c.expected_outcome ? fmt::format(" -> {}", to_string(*c.expected_outcome)) : "");
}

std::string observed_text(const harness::CaseResult& c) {
  std::string actions;
  for (Action a : c.observed_actions) actions += (actions.empty() ? "" : " > ") + std::string(to_string(a));
  return actions.empty() ? "none" : actions;
}

// "pass: retry", "FAIL: fallback", "n/a", "unknown: hang".
std::string cell_text(const harness::CaseResult* c) {
  if (!c) return "-";
  switch (c->verdict) {
    case harness::Verdict::pass:
      return "pass: " + observed_text(*c);
    case harness::Verdict::fail:
      return "FAIL: " + observed_text(*c) + (c->reason.empty() ? "" : " (" + c->reason + ")");
    case harness::Verdict::na:
      return "n/a";
    case harness::Verdict::unknown:
      return "unknown: " + (c->unknown_reason.empty() ? std::string("?") : c->unknown_reason);
  }
  return "?";
}

const char* verdict_class(const harness::CaseResult* c) {
  if (!c) return "";
  switch (c->verdict) {
    case harness::Verdict::pass:
      return "pass";
    case harness::Verdict::fail:
      return "fail";
    case harness::Verdict::na:
      return "na";
    case harness::Verdict::unknown:
      return "unknown";
  }
  return "";
}

constexpr std::string_view page_style =
    "body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1f2328}table{border-collapse:collapse;"
    "margin:12px 0}th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}"
    "th{background:#f6f8fa}td.pass{background:#dafbe1}td.fail{background:#ffebe9}td.unknown{background:#"
    "fff8c5}"
    "td.na{background:#eaeef2;color:#57606a}.warn{background:#fff8c5;padding:6px 10px}pre{font-size:12px}";

std::string settings_text(const harness::RunResult& run) {
  std::string out;
  for (const auto& s : run.settings) out += (out.empty() ? "" : ", ") + s.name + "=" + s.value;
  return out.empty() ? fmt::format("driver={}, time_scale={}", run.driver, format_number(run.time_scale))
                     : out;
}

std::string totals_text(const harness::RunResult& run) {
  return fmt::format("{}/{} pass, {} fail, {} unknown, {} n/a", run.passed(), run.cases.size(), run.failed(),
                     run.unknown(), run.not_applicable());
}

// What a change compares: the verdict, the actions at every failure point, the outcome.
bool same_behaviour(const harness::CaseResult& a, const harness::CaseResult& b) {
  return a.verdict == b.verdict && a.observed_actions == b.observed_actions &&
         a.observed_outcome == b.observed_outcome;
}

// A cell of the changes table: the scorecard's cell and the outcome ("pass: retry -> retry_recovery").
std::string change_cell(const harness::CaseResult* c) {
  if (!c) return "not run";
  auto text = cell_text(c);
  if (c->verdict != harness::Verdict::na && c->observed_outcome)
    text += " -> " + std::string(to_string(*c->observed_outcome));
  return text;
}

const harness::CaseResult& either(const CaseChange& ch) {
  return ch.before ? *ch.before : *ch.after;
}

std::string changes_title(const ScorecardColumn& before, const ScorecardColumn& after) {
  return fmt::format("llmchaos scorecard --changes: {} -> {}", before.name, after.name);
}

std::string changes_summary(const ScorecardChanges& ch) {
  if (ch.changed.empty()) return fmt::format("none changed out of {}", ch.compared);
  const auto one_run = static_cast<std::size_t>(std::count_if(
      ch.changed.begin(), ch.changed.end(), [](const CaseChange& c) { return !c.before || !c.after; }));
  auto text = fmt::format("{} of {} case(s) changed", ch.changed.size() - one_run, ch.compared);
  if (one_run > 0) text += fmt::format(", {} run by only one of the two", one_run);
  return text;
}

}  // namespace

ScorecardChanges scorecard_changes(const harness::RunResult& before, const harness::RunResult& after) {
  ScorecardChanges out;
  std::map<std::string, const harness::CaseResult*> later;
  for (const auto& c : after.cases) later.try_emplace(c.name, &c);
  std::map<std::string, bool> seen;
  for (const auto& c : before.cases) {
    if (!seen.try_emplace(c.name, true).second) continue;
    const auto it = later.find(c.name);
    if (it == later.end()) {
      out.changed.push_back({c.name, &c, nullptr});
      continue;
    }
    ++out.compared;
    if (!same_behaviour(c, *it->second)) out.changed.push_back({c.name, &c, it->second});
  }
  for (const auto& c : after.cases)
    if (seen.try_emplace(c.name, true).second) out.changed.push_back({c.name, nullptr, &c});
  return out;
}

std::string changes_markdown(const ScorecardColumn& before, const ScorecardColumn& after) {
  const auto ch = scorecard_changes(*before.run, *after.run);
  std::string out = fmt::format("## {}\n\n", md_inline(changes_title(before, after)));
  out += fmt::format(
      "**{}** (cases whose verdict, observed actions or outcome differ between the two runs, matched by "
      "case name).\n\n| run | totals |\n| --- | --- |\n",
      md_inline(changes_summary(ch)));
  for (const auto* col : {&before, &after})
    out += fmt::format("| {} | {} |\n", md_inline(col->name), totals_text(*col->run));
  if (ch.changed.empty()) return out;
  out += fmt::format("\n| case | expected | {} | {} |\n| --- | --- | --- | --- |\n", md_inline(before.name),
                     md_inline(after.name));
  for (const auto& c : ch.changed)
    out += fmt::format("| {} | {} | {} | {} |\n", md_inline(c.name), md_inline(expected_text(either(c))),
                       md_inline(change_cell(c.before)), md_inline(change_cell(c.after)));
  for (const auto& c : ch.changed) {
    out += fmt::format("\n### {}\n", md_inline(c.name));
    for (const auto& [col, run] : {std::pair{&before, c.before}, std::pair{&after, c.after}}) {
      out += fmt::format("\n{}: {}\n\n", md_inline(col->name), md_inline(change_cell(run)));
      if (run) out += md_code_block(timeline_text(*run));
    }
  }
  return out;
}

std::string changes_html(const ScorecardColumn& before, const ScorecardColumn& after) {
  const auto ch = scorecard_changes(*before.run, *after.run);
  auto h = [](std::string_view s) { return markup_escape(s); };
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>" +
                    h(changes_title(before, after)) + "</title>\n<style>" + std::string(page_style) +
                    "</style>\n</head>\n<body>\n";
  out += fmt::format(
      "<h1>{}</h1>\n<p>{}: cases whose verdict, observed actions or outcome differ between the two "
      "runs.</p>\n",
      h(changes_title(before, after)), h(changes_summary(ch)));
  if (!ch.changed.empty()) {
    out += fmt::format(
        "<table><thead><tr><th>case</th><th>expected</th><th>{}</th><th>{}</th></tr></thead><tbody>\n",
        h(before.name), h(after.name));
    for (const auto& c : ch.changed) {
      out += fmt::format("<tr><td>{}</td><td>{}</td>", h(c.name), h(expected_text(either(c))));
      for (const auto* r : {c.before, c.after})
        out += fmt::format("<td class=\"{}\">{}<pre>{}</pre></td>", verdict_class(r), h(change_cell(r)),
                           r ? h(timeline_text(*r)) : "");
      out += "</tr>\n";
    }
    out += "</tbody></table>\n";
  }
  return out + "</body>\n</html>\n";
}

std::string scorecard_markdown(const std::vector<ScorecardColumn>& columns) {
  const auto rows = rows_of(columns);
  std::string out =
      fmt::format("## llmchaos scorecard: {} case(s) x {} target(s)\n\n", rows.size(), columns.size());
  out += "| target | version and settings | started | totals |\n| --- | --- | --- | --- |\n";
  for (const auto& col : columns)
    out += fmt::format("| {} | {} (llmchaos {}) | {} | {} |\n", md_inline(col.name),
                       md_inline(settings_text(*col.run)), md_inline(col.run->tool_version),
                       md_inline(col.run->started_at), totals_text(*col.run));
  for (const auto& col : columns)
    for (const auto& w : col.run->warnings)
      out += fmt::format("\n> **{}:** {}\n", md_inline(col.name), md_inline(w));
  out += "\n| case | expected |";
  for (const auto& col : columns) out += " " + md_inline(col.name) + " |";
  out += "\n| --- | --- |";
  for (std::size_t k = 0; k < columns.size(); ++k) out += " --- |";
  out += "\n";
  for (const auto& r : rows) {
    out += fmt::format("| {} | {} |", md_inline(r.name), md_inline(expected_text(*r.first)));
    for (const auto* c : r.cells) {
      const auto text = cell_text(c);  // "FAIL: ..." in bold, the rest escaped
      out += c && c->verdict == harness::Verdict::fail ? " **FAIL**" + md_inline(text.substr(4)) + " |"
                                                       : " " + md_inline(text) + " |";
    }
    out += "\n";
  }
  out +=
      "\nEach cell: the verdict and the actions the mock's ledger showed at each failure point. n/a: the "
      "target declared it lacks a capability the case needs (not a pass, not a failure).\n";
  return out;
}

std::string scorecard_html(const std::vector<ScorecardColumn>& columns) {
  const auto rows = rows_of(columns);
  auto h = [](std::string_view s) { return markup_escape(s); };
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>llmchaos "
      "scorecard</title>\n<style>" +
      std::string(page_style) + "</style>\n</head>\n<body>\n";
  out += fmt::format("<h1>llmchaos scorecard: {} case(s) x {} target(s)</h1>\n", rows.size(), columns.size());
  out +=
      "<table><thead><tr><th>target</th><th>version and "
      "settings</th><th>started</th><th>totals</th></tr></thead><tbody>\n";
  for (const auto& col : columns)
    out += fmt::format("<tr><td>{}</td><td>{} (llmchaos {})</td><td>{}</td><td>{}</td></tr>\n", h(col.name),
                       h(settings_text(*col.run)), h(col.run->tool_version), h(col.run->started_at),
                       h(totals_text(*col.run)));
  out += "</tbody></table>\n";
  for (const auto& col : columns)
    for (const auto& w : col.run->warnings)
      out += fmt::format("<p class=\"warn\"><b>{}:</b> {}</p>\n", h(col.name), h(w));
  out += "<table><thead><tr><th>case</th><th>expected</th>";
  for (const auto& col : columns) out += "<th>" + h(col.name) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& r : rows) {
    out += fmt::format("<tr><td>{}</td><td>{}</td>", h(r.name), h(expected_text(*r.first)));
    for (const auto* c : r.cells) {
      out += fmt::format("<td class=\"{}\">{}</td>", verdict_class(c), h(cell_text(c)));
    }
    out += "</tr>\n";
  }
  out +=
      "</tbody></table>\n<p>Each cell: the verdict and the actions the mock's ledger showed at each failure "
      "point. "
      "n/a: the target declared it lacks a capability the case needs (not a pass, not a "
      "failure).</p>\n</body>\n</html>\n";
  return out;
}

}  // namespace llmchaos::reports
