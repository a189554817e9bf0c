// Reading report.json back into the run it was written from (`llmchaos report merge`, `--durations`):
// the same field tables as the writer (json_tables.hpp), so the two cannot drift apart.
#include <algorithm>
#include <boost/json.hpp>
#include <boost/json/basic_parser_impl.hpp>
#include <charconv>
#include <fstream>
#include <sstream>

#include "json_tables.hpp"
#include "llmchaos/core/file_text.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/reports/json.hpp"

namespace llmchaos::reports {
namespace {
namespace json = boost::json;

// Boost.JSON's own parser (1.81) reads some 17-digit doubles one unit in the last place off; the
// writer prints the shortest text that reads back exactly, so the reader parses numbers with
// std::from_chars: a report read back and written again is the same text (a merged report is the
// one run's). Otherwise the value is built as json::parser builds it.
struct PreciseHandler {
  static constexpr std::size_t max_object_size = json::object::max_size();
  static constexpr std::size_t max_array_size = json::array::max_size();
  static constexpr std::size_t max_key_size = json::string::max_size();
  static constexpr std::size_t max_string_size = json::string::max_size();
  json::value_stack st;
  std::string number;

  bool on_document_begin(boost::system::error_code&) { return true; }
  bool on_document_end(boost::system::error_code&) { return true; }
  bool on_array_begin(boost::system::error_code&) { return true; }
  bool on_array_end(std::size_t n, boost::system::error_code&) {
    st.push_array(n);
    return true;
  }
  bool on_object_begin(boost::system::error_code&) { return true; }
  bool on_object_end(std::size_t n, boost::system::error_code&) {
    st.push_object(n);
    return true;
  }
  bool on_string_part(json::string_view s, std::size_t, boost::system::error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_string(json::string_view s, std::size_t, boost::system::error_code&) {
    st.push_string(s);
    return true;
  }
  bool on_key_part(json::string_view s, std::size_t, boost::system::error_code&) {
    st.push_chars(s);
    return true;
  }
  bool on_key(json::string_view s, std::size_t, boost::system::error_code&) {
    st.push_key(s);
    return true;
  }
  bool on_number_part(json::string_view s, boost::system::error_code&) {
    number.append(s.data(), s.size());
    return true;
  }
  bool on_int64(std::int64_t i, json::string_view, boost::system::error_code&) {
    number.clear();
    st.push_int64(i);
    return true;
  }
  bool on_uint64(std::uint64_t u, json::string_view, boost::system::error_code&) {
    number.clear();
    st.push_uint64(u);
    return true;
  }
  bool on_double(double d, json::string_view s, boost::system::error_code&) {
    number.append(s.data(), s.size());
    double exact = 0;
    const auto [end, ec] = std::from_chars(number.data(), number.data() + number.size(), exact);
    st.push_double(ec == std::errc() && end == number.data() + number.size() ? exact : d);
    number.clear();
    return true;
  }
  bool on_bool(bool b, boost::system::error_code&) {
    st.push_bool(b);
    return true;
  }
  bool on_null(boost::system::error_code&) {
    st.push_null();
    return true;
  }
  bool on_comment_part(json::string_view, boost::system::error_code&) { return true; }
  bool on_comment(json::string_view, boost::system::error_code&) { return true; }
};

}  // namespace

harness::RunResult run_from_json(std::string_view text, const std::string& source) {
  json::basic_parser<PreciseHandler> parser(json::parse_options{});
  // One arena for the whole document: freed at once when the run is read (no per-node allocations).
  parser.handler().st.reset(json::make_shared_resource<json::monotonic_resource>());
  boost::system::error_code ec;
  const std::size_t used = parser.write_some(false, text.data(), text.size(), ec);
  if (!ec && used < text.size()) ec = json::error::extra_data;
  if (ec) {
    // Where the parser stopped, as line:col of the text.
    int line = 1, col = 1;
    for (std::size_t i = 0; i < used && i < text.size(); ++i) {
      if (text[i] == '\n') {
        ++line;
        col = 1;
      } else {
        ++col;
      }
    }
    throw SpecError({source, line, col}, "not a JSON report: " + ec.message());
  }
  const json::value doc = parser.handler().st.release();
  const auto* obj = doc.if_object();
  if (!obj || !obj->contains("schema"))
    throw SpecError({source, 0, 0},
                    "not an llmchaos JSON report (no \"schema\" key; written by `llmchaos run --json`?)");
  harness::RunResult run;
  try {
    detail::jsonf::decode(doc, run);
  } catch (const detail::jsonf::BadValue& e) {
    throw SpecError({source, 0, 0}, "not a JSON report of this version: " + e.where());
  }
  return run;
}

harness::RunResult read_json_report(const std::string& path) {
  // Read whole in one allocation (a 10,000-case report is some 77 MB).
  return run_from_json(read_file_text(path, "the JSON report"), path);
}

}  // namespace llmchaos::reports
