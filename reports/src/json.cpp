// JSON: everything the run produced, for tools. Keys keep the order of the field tables
// (json_tables.hpp, shared with the reader in json_read.cpp), and the printer indents, so two reports
// diff line by line. The report streams: the run's fields, then one case at a time, so no whole-report
// value or string is ever held. Compact mode drops the indentation and puts each case on one line.
#include "llmchaos/reports/json.hpp"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <ostream>

#include "json_tables.hpp"
#include "text.hpp"
#include "writers.hpp"

namespace json = boost::json;

namespace llmchaos::reports {
namespace {

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

// depth < 0: compact (no whitespace at all).
void print(std::ostream& out, const json::value& v, int depth) {
  const bool compact = depth < 0;
  const std::string pad(compact ? 0 : 2 * (depth + 1), ' '), end_pad(compact ? 0 : 2 * depth, ' ');
  const char* nl = compact ? "" : "\n";
  const char* sep = compact ? "," : ",\n";
  const int next = compact ? depth : depth + 1;
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
      out << '[' << nl;
      for (std::size_t i = 0; i < a.size(); ++i) {
        out << pad;
        print(out, a[i], next);
        out << (i + 1 < a.size() ? sep : nl);
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
      out << '{' << nl;
      std::size_t i = 0;
      for (const auto& [key, value] : o) {
        out << pad;
        print_string(out, key);
        out << (compact ? ":" : ": ");
        print(out, value, next);
        out << (++i < o.size() ? sep : nl);
      }
      out << end_pad << '}';
      break;
    }
  }
}

}  // namespace

json::value to_json_value(const client::DecisionLog& log) {
  return detail::jsonf::encode(log);
}

json::value to_json_value(const harness::RunResult& run) {
  return detail::jsonf::encode(run);
}

namespace detail {
void write_json(const harness::RunResult& run, const Options& options, std::ostream& out) {
  // The run's fields as one object would print them, except the cases: streamed one at a time.
  const bool compact = options.json_compact;
  out << '{' << (compact ? "" : "\n");
  bool first = true;
  for (const auto& f : jsonf::table<harness::RunResult>::fields()) {
    out << (first ? "" : compact ? "," : ",\n") << (compact ? "" : "  ");
    first = false;
    print_string(out, f.key);
    out << (compact ? ":" : ": ");
    if (f.key != jsonf::cases_key) {
      print(out, f.write(run), compact ? -1 : 1);
      continue;
    }
    if (run.cases.empty()) {
      out << "[]";
      continue;
    }
    out << "[\n";
    for (std::size_t i = 0; i < run.cases.size(); ++i) {
      out << (compact ? "" : "    ");
      print(out, jsonf::encode(run.cases[i]), compact ? -1 : 2);
      out << (i + 1 < run.cases.size() ? ",\n" : "\n");
    }
    out << (compact ? "" : "  ") << ']';
  }
  out << (compact ? "" : "\n") << "}\n";
}
}  // namespace detail

}  // namespace llmchaos::reports
