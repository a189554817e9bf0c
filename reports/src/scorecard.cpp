// The scorecard (scorecard.hpp): rows are cases (by name, in the order the runs first list them),
// columns are targets; a cell is the verdict and the actions the ledger showed.
#include "llmchaos/reports/scorecard.hpp"

#include <map>

#include <fmt/format.h>

#include "text.hpp"

namespace llmchaos::reports {
namespace {

using detail::format_number;
using detail::markup_escape;
using detail::md_inline;

struct Row {
  std::string name;
  const harness::CaseResult* first = nullptr;      // for the expectation
  std::vector<const harness::CaseResult*> cells;  // per column, nullptr: not run there
};

std::vector<Row> rows_of(const std::vector<ScorecardColumn>& columns) {
  std::vector<Row> rows;
  std::map<std::string, std::size_t> index;
  for (std::size_t k = 0; k < columns.size(); ++k)
    for (const auto& c : columns[k].run->cases) {
      auto [it, added] = index.try_emplace(c.name, rows.size());
      if (added) rows.push_back(Row{c.name, &c, std::vector<const harness::CaseResult*>(columns.size(), nullptr)});
      rows[it->second].cells[k] = &c;
    }
  return rows;
}

std::string expected_text(const harness::CaseResult& c) {
  return std::string(to_string(c.expected)) + (c.expected_outcome ? fmt::format(" -> {}", to_string(*c.expected_outcome)) : "");
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
    case harness::Verdict::pass: return "pass: " + observed_text(*c);
    case harness::Verdict::fail: return "FAIL: " + observed_text(*c) + (c->reason.empty() ? "" : " (" + c->reason + ")");
    case harness::Verdict::na: return "n/a";
    case harness::Verdict::unknown: return "unknown: " + (c->unknown_reason.empty() ? std::string("?") : c->unknown_reason);
  }
  return "?";
}

std::string settings_text(const harness::RunResult& run) {
  std::string out;
  for (const auto& s : run.settings) out += (out.empty() ? "" : ", ") + s.name + "=" + s.value;
  return out.empty() ? fmt::format("driver={}, time_scale={}", run.driver, format_number(run.time_scale)) : out;
}

std::string totals_text(const harness::RunResult& run) {
  return fmt::format("{}/{} pass, {} fail, {} unknown, {} n/a", run.passed(), run.cases.size(), run.failed(), run.unknown(),
                     run.not_applicable());
}

}  // namespace

std::string scorecard_markdown(const std::vector<ScorecardColumn>& columns) {
  const auto rows = rows_of(columns);
  std::string out = fmt::format("## llmchaos scorecard: {} case(s) x {} target(s)\n\n", rows.size(), columns.size());
  out += "| target | version and settings | started | totals |\n| --- | --- | --- | --- |\n";
  for (const auto& col : columns)
    out += fmt::format("| {} | {} (llmchaos {}) | {} | {} |\n", md_inline(col.name), md_inline(settings_text(*col.run)),
                       md_inline(col.run->tool_version), md_inline(col.run->started_at), totals_text(*col.run));
  for (const auto& col : columns)
    for (const auto& w : col.run->warnings) out += fmt::format("\n> **{}:** {}\n", md_inline(col.name), md_inline(w));
  out += "\n| case | expected |";
  for (const auto& col : columns) out += " " + md_inline(col.name) + " |";
  out += "\n| --- | --- |";
  for (std::size_t k = 0; k < columns.size(); ++k) out += " --- |";
  out += "\n";
  for (const auto& r : rows) {
    out += fmt::format("| {} | {} |", md_inline(r.name), md_inline(expected_text(*r.first)));
    for (const auto* c : r.cells) {
      const auto text = cell_text(c);  // "FAIL: ..." in bold, the rest escaped
      out += c && c->verdict == harness::Verdict::fail ? " **FAIL**" + md_inline(text.substr(4)) + " |" : " " + md_inline(text) + " |";
    }
    out += "\n";
  }
  out += "\nEach cell: the verdict and the actions the mock's ledger showed at each failure point. n/a: the "
         "target declared it lacks a capability the case needs (not a pass, not a failure).\n";
  return out;
}

std::string scorecard_html(const std::vector<ScorecardColumn>& columns) {
  const auto rows = rows_of(columns);
  auto h = [](std::string_view s) { return markup_escape(s); };
  std::string out =
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>llmchaos scorecard</title>\n"
      "<style>body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#1f2328}table{border-collapse:collapse;"
      "margin:12px 0}th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}"
      "th{background:#f6f8fa}td.pass{background:#dafbe1}td.fail{background:#ffebe9}td.unknown{background:#fff8c5}"
      "td.na{background:#eaeef2;color:#57606a}.warn{background:#fff8c5;padding:6px 10px}</style>\n</head>\n<body>\n";
  out += fmt::format("<h1>llmchaos scorecard: {} case(s) x {} target(s)</h1>\n", rows.size(), columns.size());
  out += "<table><thead><tr><th>target</th><th>version and settings</th><th>started</th><th>totals</th></tr></thead><tbody>\n";
  for (const auto& col : columns)
    out += fmt::format("<tr><td>{}</td><td>{} (llmchaos {})</td><td>{}</td><td>{}</td></tr>\n", h(col.name),
                       h(settings_text(*col.run)), h(col.run->tool_version), h(col.run->started_at), h(totals_text(*col.run)));
  out += "</tbody></table>\n";
  for (const auto& col : columns)
    for (const auto& w : col.run->warnings) out += fmt::format("<p class=\"warn\"><b>{}:</b> {}</p>\n", h(col.name), h(w));
  out += "<table><thead><tr><th>case</th><th>expected</th>";
  for (const auto& col : columns) out += "<th>" + h(col.name) + "</th>";
  out += "</tr></thead><tbody>\n";
  for (const auto& r : rows) {
    out += fmt::format("<tr><td>{}</td><td>{}</td>", h(r.name), h(expected_text(*r.first)));
    for (const auto* c : r.cells) {
      const char* cls = !c ? "" : c->verdict == harness::Verdict::pass ? "pass" : c->verdict == harness::Verdict::fail ? "fail"
                                : c->verdict == harness::Verdict::na   ? "na"   : "unknown";
      out += fmt::format("<td class=\"{}\">{}</td>", cls, h(cell_text(c)));
    }
    out += "</tr>\n";
  }
  out += "</tbody></table>\n<p>Each cell: the verdict and the actions the mock's ledger showed at each failure point. "
         "n/a: the target declared it lacks a capability the case needs (not a pass, not a failure).</p>\n</body>\n</html>\n";
  return out;
}

}  // namespace llmchaos::reports
