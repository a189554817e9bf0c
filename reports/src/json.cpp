// JSON: everything the run produced, for tools. Keys keep the order written here (Boost.JSON objects
// preserve insertion order), and the printer indents, so two reports diff line by line.
#include "llmchaos/reports/json.hpp"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <ostream>

#include "llmchaos/core/ledger_json.hpp"
#include "text.hpp"
#include "writers.hpp"

namespace json = boost::json;

namespace llmchaos::reports {
namespace {

using harness::CaseResult;

template <class E>
json::value name_or_null(const std::optional<E>& v) {
  return v ? json::value(to_string(*v)) : json::value(nullptr);
}

json::value attempt_json(const client::AttemptRecord& a) {
  return json::object{{"index", a.index},
                      {"route", a.route},
                      {"route_attempt", a.route_attempt},
                      {"kind", to_string(a.kind)},
                      {"start_ms", a.start_ms},
                      {"end_ms", a.end_ms},
                      {"status", a.status},
                      {"event", to_string(a.event)},
                      {"owner", to_string(a.owner)},
                      {"commit", to_string(a.commit)},
                      {"events", a.events},
                      {"visible_tokens", a.visible_tokens},
                      {"tool_call", a.tool_call},
                      {"reason", a.reason}};
}

json::value failure_json(const client::FailurePoint& f) {
  return json::object{{"point", f.point},    {"attempt", f.attempt},
                      {"route", f.route},    {"action", to_string(f.action)},
                      {"rule", f.rule},      {"rule_text", f.rule_text},
                      {"inputs", f.inputs},  {"next_route", f.next_route},
                      {"wait_ms", f.wait_ms}};
}

// Journal lines are JSON themselves; a line that does not parse is kept whole under "unparsed".
json::value journal_json(const std::string& line) {
  boost::system::error_code ec;
  auto v = json::parse(line, ec);
  if (ec) return json::object{{"unparsed", line}};
  return v;
}

json::value case_json(const CaseResult& c) {
  json::array tags(c.tags.begin(), c.tags.end());
  json::array points;
  for (const auto& p : c.points)
    points.push_back(json::object{{"point", p.point},
                                  {"expected", to_string(p.expected)},
                                  {"from_log", to_string(p.from_log)},
                                  {"from_ledger", to_string(p.from_ledger)},
                                  {"rule", p.rule}});
  json::array checks;
  for (const auto& ch : c.checks)
    checks.push_back(json::object{{"name", ch.name}, {"ok", ch.ok}, {"message", ch.message}});
  json::object by_route;
  for (const auto& [route, n] : c.attempts_by_route) by_route[route] = n;
  json::array ledger, effects, logs;
  for (const auto& e : c.ledger) ledger.push_back(llmchaos::to_json_value(e));
  for (const auto& s : c.side_effects) effects.push_back(llmchaos::to_json_value(s));
  for (const auto& log : c.logs) logs.push_back(to_json_value(log));
  json::array started(c.request_started_ms.begin(), c.request_started_ms.end());
  json::array observed_actions;
  for (Action a : c.observed_actions) observed_actions.push_back(json::value(to_string(a)));
  return json::object{{"name", c.name},
                      {"description", c.description},
                      {"file", c.file},
                      {"folder", c.folder},
                      {"tags", std::move(tags)},
                      {"verdict", harness::to_string(c.verdict)},
                      {"unknown_reason", c.unknown_reason},
                      {"summary", detail::verdict_summary(c)},
                      {"expected", to_string(c.expected)},
                      {"observed", to_string(c.observed)},
                      {"expected_outcome", name_or_null(c.expected_outcome)},
                      {"observed_outcome", name_or_null(c.observed_outcome)},
                      {"observed_actions", std::move(observed_actions)},
                      {"policy", c.policy_name},
                      {"policy_file", c.policy_file},
                      {"wall_ms", c.wall_ms},
                      {"deadline_ms", c.deadline_ms},
                      {"points", std::move(points)},
                      {"checks", std::move(checks)},
                      {"attempts_by_route", std::move(by_route)},
                      {"ledger", std::move(ledger)},
                      {"side_effects", std::move(effects)},
                      {"request_started_ms", std::move(started)},
                      {"logs", std::move(logs)},
                      {"alive_log", c.alive_log ? to_json_value(*c.alive_log) : json::value(nullptr)},
                      {"driver_output", c.driver_output}};
}

// Pretty printer: two-space indent; doubles in their shortest round-trip form ("12.5", not "1.25E1");
// strings repaired to valid UTF-8 so a strict parser reads every report.
void print_string(std::ostream& out, std::string_view raw) {
  const std::string s = detail::valid_utf8(raw);
  out << '"';
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    switch (c) {
      case '"':
        out << "\\\"";
        break;
      case '\\':
        out << "\\\\";
        break;
      case '\n':
        out << "\\n";
        break;
      case '\r':
        out << "\\r";
        break;
      case '\t':
        out << "\\t";
        break;
      default:
        if (c < 0x20)
          out << fmt::format("\\u{:04x}", c);
        else
          out << ch;
    }
  }
  out << '"';
}

void print(std::ostream& out, const json::value& v, int depth) {
  const std::string pad(2 * (depth + 1), ' '), end_pad(2 * depth, ' ');
  switch (v.kind()) {
    case json::kind::null:
      out << "null";
      break;
    case json::kind::bool_:
      out << (v.get_bool() ? "true" : "false");
      break;
    case json::kind::int64:
      out << v.get_int64();
      break;
    case json::kind::uint64:
      out << v.get_uint64();
      break;
    case json::kind::double_:
      out << detail::format_number(v.get_double());
      break;
    case json::kind::string:
      print_string(out, v.get_string());
      break;
    case json::kind::array: {
      const auto& a = v.get_array();
      if (a.empty()) {
        out << "[]";
        break;
      }
      out << "[\n";
      for (std::size_t i = 0; i < a.size(); ++i) {
        out << pad;
        print(out, a[i], depth + 1);
        out << (i + 1 < a.size() ? ",\n" : "\n");
      }
      out << end_pad << ']';
      break;
    }
    case json::kind::object: {
      const auto& o = v.get_object();
      if (o.empty()) {
        out << "{}";
        break;
      }
      out << "{\n";
      std::size_t i = 0;
      for (const auto& [key, value] : o) {
        out << pad;
        print_string(out, key);
        out << ": ";
        print(out, value, depth + 1);
        out << (++i < o.size() ? ",\n" : "\n");
      }
      out << end_pad << '}';
      break;
    }
  }
}

}  // namespace

json::value to_json_value(const client::DecisionLog& log) {
  json::array attempts, failures, journal;
  for (const auto& a : log.attempts) attempts.push_back(attempt_json(a));
  for (const auto& f : log.failures) failures.push_back(failure_json(f));
  for (const auto& line : log.journal) journal.push_back(journal_json(line));
  return json::object{{"operation_id", log.operation_id},
                      {"delivery", log.delivery},
                      {"outcome", to_string(log.outcome)},
                      {"answered", log.answered},
                      {"text", log.text},
                      {"route", log.route},
                      {"model", log.model},
                      {"input_tokens", log.input_tokens},
                      {"output_tokens", log.output_tokens},
                      {"elapsed_ms", log.elapsed_ms},
                      {"extra_cost_usd", log.extra_cost_usd},
                      {"attempts", std::move(attempts)},
                      {"failures", std::move(failures)},
                      {"journal", std::move(journal)}};
}

json::value to_json_value(const harness::RunResult& run) {
  // Every outcome is present, zeros included: the split is six numbers, never one success rate.
  const auto split = run.outcome_split();
  json::object outcomes;
  for (const auto& [outcome, name] : enum_names<Outcome>::table) {
    const auto it = split.find(outcome);
    outcomes[name] = it == split.end() ? 0 : it->second;
  }
  json::array changes;
  const auto names = [](const std::vector<Action>& all) {
    json::array a;
    for (Action x : all) a.push_back(json::value(to_string(x)));
    return a;
  };
  for (const auto& ch : run.baseline_changes)
    changes.push_back(json::object{{"case", ch.case_name},
                                   {"before", to_string(ch.before)},
                                   {"after", to_string(ch.after)},
                                   {"before_all", names(ch.before_all)},
                                   {"after_all", names(ch.after_all)}});
  json::array cases;
  for (const auto& c : run.cases) cases.push_back(case_json(c));
  return json::object{{"schema", json_schema_id},
                      {"tool_version", run.tool_version},
                      {"seed", run.seed},
                      {"driver", run.driver},
                      {"time_scale", run.time_scale},
                      {"started_at", run.started_at},
                      {"duration_ms", run.duration_ms},
                      {"totals", json::object{{"cases", run.cases.size()},
                                              {"passed", run.passed()},
                                              {"failed", run.failed()},
                                              {"unknown", run.unknown()}}},
                      {"outcome_split", std::move(outcomes)},
                      {"requests", detail::split_total(split)},
                      {"baseline", run.baseline.empty() ? json::value(nullptr) : json::value(run.baseline)},
                      {"baseline_changes", std::move(changes)},
                      {"cases", std::move(cases)}};
}

namespace detail {
void write_json(const harness::RunResult& run, std::ostream& out) {
  print(out, reports::to_json_value(run), 0);
  out << '\n';
}
}  // namespace detail

}  // namespace llmchaos::reports
