// The table of dialects and what they share.
#include <algorithm>
#include <cctype>

#include "dialect_util.hpp"
#include "llmchaos/mockprovider/dialect.hpp"

namespace llmchaos::mock {

// Each defined in its own unit.
extern const DialectSpec openai_dialect;
extern const DialectSpec anthropic_dialect;
extern const DialectSpec gemini_dialect;

namespace {
// The one table: to add a dialect, add its unit and a line here (see mockprovider/README.md).
const DialectSpec* const dialect_table[] = {&openai_dialect, &anthropic_dialect, &gemini_dialect};
}  // namespace

const DialectSpec& dialect_spec(Dialect d) {
  for (const auto* spec : dialect_table)
    if (spec->id == d) return *spec;
  return openai_dialect;
}

std::vector<std::string> split_tokens(std::string_view text) {
  std::vector<std::string> out;
  std::size_t i = 0;
  const auto space = [&](std::size_t k) { return std::isspace(static_cast<unsigned char>(text[k])) != 0; };
  while (i < text.size()) {
    std::size_t start = i;
    if (out.empty())
      while (i < text.size() && space(i)) ++i;  // leading whitespace rides with the first word
    while (i < text.size() && !space(i)) ++i;
    while (i < text.size() && space(i)) ++i;
    out.emplace_back(text.substr(start, i - start));
  }
  return out;
}

int count_words(std::string_view text) {
  int n = 0;
  bool in_word = false;
  for (char c : text) {
    const bool sp = std::isspace(static_cast<unsigned char>(c)) != 0;
    if (!sp && !in_word) ++n;
    in_word = !sp;
  }
  return n;
}

std::string Answer::text() const {
  std::string out;
  for (const auto& t : tokens) out += t;
  return out;
}

int Answer::output_tokens() const { return tool_name.empty() ? static_cast<int>(tokens.size()) : 1; }

namespace detail {

SseFrame sse_data(const json::value& v, bool content) {
  return {"data: " + json::serialize(v) + "\n\n", content};
}

SseFrame sse_event(std::string_view name, const json::value& v, bool content) {
  std::string s = "event: ";
  s += name;
  s += "\ndata: ";
  s += json::serialize(v);
  s += "\n\n";
  return {std::move(s), content};
}

SseFrame sse_data_crlf(const json::value& v, bool content) {
  return {"data: " + json::serialize(v) + "\r\n\r\n", content};
}

void append_json_string(std::string& out, std::string_view s) {
  // Plain text needs no escape: copy it whole; anything else goes through the serializer itself.
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    const auto u = static_cast<unsigned char>(c);
    return u >= 0x20 && u < 0x7f && c != '"' && c != '\\';
  });
  if (plain) {
    out += '"';
    out += s;
    out += '"';
  } else {
    out += json::serialize(json::string_view(s.data(), s.size()));
  }
}

std::string_view path_only(std::string_view target) { return target.substr(0, target.find('?')); }

std::string_view query_of(std::string_view target) {
  auto q = target.find('?');
  return q == std::string_view::npos ? std::string_view{} : target.substr(q + 1);
}

const json::object* parse_body(std::string_view body, json::value& storage, ParsedRequest& out) {
  boost::system::error_code ec;
  storage = json::parse(body, ec, storage.storage());  // in the caller's memory resource
  if (ec) {
    out.error = RequestError::malformed_json;
    out.detail = ec.message();
    return nullptr;
  }
  if (!storage.is_object()) {
    out.error = RequestError::malformed_json;
    out.detail = "the body must be a JSON object";
    return nullptr;
  }
  return &storage.get_object();
}

std::string str_member(const json::object& o, std::string_view key) {
  if (auto* v = o.if_contains(key); v && v->is_string()) return std::string(v->get_string());
  return {};
}

bool bool_member(const json::object& o, std::string_view key) {
  if (auto* v = o.if_contains(key); v && v->is_bool()) return v->get_bool();
  return false;
}

const json::array* array_member(const json::object& o, std::string_view key) {
  if (auto* v = o.if_contains(key); v && v->is_array()) return &v->get_array();
  return nullptr;
}

const json::object* object_member(const json::object& o, std::string_view key) {
  if (auto* v = o.if_contains(key); v && v->is_object()) return &v->get_object();
  return nullptr;
}

int words_in(const json::value& v) {
  switch (v.kind()) {
    case json::kind::string: return count_words(v.get_string());
    case json::kind::array: {
      int n = 0;
      for (const auto& e : v.get_array()) n += words_in(e);
      return n;
    }
    case json::kind::object: {
      int n = 0;
      for (const auto& [k, e] : v.get_object()) n += words_in(e);
      return n;
    }
    default: return 0;
  }
}

}  // namespace detail
}  // namespace llmchaos::mock
