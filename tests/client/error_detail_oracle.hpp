#pragma once
// The oracle ErrorDetail is pinned against: a full JSON reading of the body (Boost.JSON's SAX parser),
// giving the fields named by the keys the rules read, at any depth, in document order, duplicates and
// all. Shared by tests/client/test_error_detail.cpp and tests/fuzz/fuzz_error_detail.cpp.
#include <boost/json/basic_parser_impl.hpp>
#include <boost/json/parse.hpp>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/client/error_detail.hpp"

namespace llmchaos::test {

struct OracleField {
  client::DetailKey key;
  bool scalar;
  std::string text;  // a string's decoded content, or a scalar's text as written
};

namespace oracle_detail {

struct Handler {
  static constexpr std::size_t max_object_size = std::size_t(-1);
  static constexpr std::size_t max_array_size = std::size_t(-1);
  static constexpr std::size_t max_key_size = std::size_t(-1);
  static constexpr std::size_t max_string_size = std::size_t(-1);

  std::vector<OracleField> fields;
  std::string key, string, number;
  std::optional<client::DetailKey> pending;  // the key just read, if the rules read it

  void value(bool scalar, std::string text) {
    if (pending) fields.push_back({*pending, scalar, std::move(text)});
    pending.reset();
  }
  using ec = boost::json::error_code;
  using sv = boost::json::string_view;
  bool on_document_begin(ec&) { return true; }
  bool on_document_end(ec&) { return true; }
  bool on_object_begin(ec&) { return pending.reset(), true; }
  bool on_object_end(std::size_t, ec&) { return true; }
  bool on_array_begin(ec&) { return pending.reset(), true; }
  bool on_array_end(std::size_t, ec&) { return true; }
  bool on_key_part(sv s, std::size_t, ec&) { return key.append(s.data(), s.size()), true; }
  bool on_key(sv s, std::size_t, ec&) {
    key.append(s.data(), s.size());
    pending = client::detail_key_of(key);
    key.clear();
    return true;
  }
  bool on_string_part(sv s, std::size_t, ec&) { return string.append(s.data(), s.size()), true; }
  bool on_string(sv s, std::size_t, ec&) {
    string.append(s.data(), s.size());
    value(false, std::move(string));
    string.clear();
    return true;
  }
  bool on_number_part(sv s, ec&) { return number.append(s.data(), s.size()), true; }
  bool on_number(sv s) {
    number.append(s.data(), s.size());
    value(true, std::move(number));
    number.clear();
    return true;
  }
  bool on_int64(std::int64_t, sv s, ec&) { return on_number(s); }
  bool on_uint64(std::uint64_t, sv s, ec&) { return on_number(s); }
  bool on_double(double, sv s, ec&) { return on_number(s); }
  bool on_bool(bool b, ec&) { return value(true, b ? "true" : "false"), true; }
  bool on_null(ec&) { return value(true, "null"), true; }
  bool on_comment_part(sv, ec&) { return true; }
  bool on_comment(sv, ec&) { return true; }
};

}  // namespace oracle_detail

// The fields of `body` (cut where ErrorDetail cuts it), or nullopt when it is not one valid JSON text.
inline std::optional<std::vector<OracleField>> oracle_fields(std::string_view body) {
  body = body.substr(0, client::ErrorDetail::max_body);
  boost::json::basic_parser<oracle_detail::Handler> parser(boost::json::parse_options{});
  boost::json::error_code ec;
  const auto used = parser.write_some(false, body.data(), body.size(), ec);
  if (ec || used != body.size()) return std::nullopt;
  auto fields = std::move(parser.handler().fields);
  if (fields.size() > client::ErrorDetail::max_fields) fields.resize(client::ErrorDetail::max_fields);
  return fields;
}

// A string value's content as ErrorDetail gives it (escapes as written), decoded as JSON decodes it.
inline std::optional<std::string> decoded(std::string_view raw) {
  boost::json::error_code ec;
  auto v = boost::json::parse(std::string("\"").append(raw).append("\""), ec);
  if (ec || !v.is_string()) return std::nullopt;
  return std::string(v.as_string());
}

// Where ErrorDetail and the oracle differ ("" when they agree), for a failure message.
inline std::string first_difference(const client::ErrorDetail& detail,
                                    const std::vector<OracleField>& oracle) {
  if (detail.size() != oracle.size())
    return "ErrorDetail has " + std::to_string(detail.size()) + " fields, JSON has " +
           std::to_string(oracle.size());
  for (std::size_t i = 0; i < oracle.size(); ++i) {
    const auto got = detail.field(i);
    const auto& want = oracle[i];
    const auto text = got.scalar ? std::optional<std::string>(std::string(got.value)) : decoded(got.value);
    if (got.key != want.key || got.scalar != want.scalar || text != want.text)
      return "field " + std::to_string(i) + ": ErrorDetail has '" + std::string(got.value) + "' (key " +
             std::to_string(static_cast<int>(got.key)) + "), JSON has '" + want.text + "' (key " +
             std::to_string(static_cast<int>(want.key)) + ")";
  }
  return {};
}

}  // namespace llmchaos::test
