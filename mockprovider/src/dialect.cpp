// The table of dialects and what they share.
#include "llmchaos/mockprovider/dialect.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>

#include "dialect_util.hpp"
#include "llmchaos/core/byte_scan.hpp"

namespace llmchaos::mock {

// Each defined in its own unit.
extern const DialectSpec openai_dialect;
extern const DialectSpec anthropic_dialect;
extern const DialectSpec gemini_dialect;
extern const DialectSpec responses_dialect;
extern const DialectSpec azure_dialect;
extern const DialectSpec bedrock_dialect;

namespace {
// The one table: to add a dialect, add its unit and a line here (see mockprovider/README.md).
const DialectSpec* const dialect_table[] = {&openai_dialect,    &anthropic_dialect, &gemini_dialect,
                                            &responses_dialect, &azure_dialect,     &bedrock_dialect};
}  // namespace

const DialectSpec& dialect_spec(Dialect d) {
  for (const auto* spec : dialect_table)
    if (spec->id == d) return *spec;
  return openai_dialect;
}

std::vector<Dialect> registered_dialects() {
  std::vector<Dialect> out;
  for (const auto* spec : dialect_table) out.push_back(spec->id);
  return out;
}

namespace {
std::string_view trimmed(std::string_view v) {
  while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
  while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
  return v;
}

// The key a header value carries under `scheme` ("" when none).
std::string_view key_in(std::string_view value, std::string_view scheme) {
  value = trimmed(value);
  if (scheme.empty()) return value;
  if (value.size() <= scheme.size() || !byte_scan::iequals(value.substr(0, scheme.size()), scheme) ||
      (value[scheme.size()] != ' ' && value[scheme.size()] != '\t'))
    return {};
  return trimmed(value.substr(scheme.size()));
}
}  // namespace

bool has_credential(const DialectSpec& dialect, std::span<const std::pair<std::string, std::string>> headers,
                    std::string_view target) {
  for (const auto& c : dialect.auth.headers)
    for (const auto& [name, value] : headers)
      if (name == c.header && !key_in(value, c.scheme).empty()) return true;
  if (dialect.auth.query_param.empty()) return false;
  const auto q = target.find('?');
  for (auto query = q == std::string_view::npos ? std::string_view{} : target.substr(q + 1);
       !query.empty();) {
    const auto amp = query.find('&');
    const auto pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
    const auto eq = pair.find('=');
    if (eq != std::string_view::npos && eq + 1 < pair.size() &&
        pair.substr(0, eq) == dialect.auth.query_param)
      return true;
  }
  return false;
}

bool credential_header(std::string_view name) {
  for (const auto* spec : dialect_table)
    for (const auto& c : spec->auth.headers)
      if (c.header == name) return true;
  return false;
}

std::string sdk_base_url(std::string_view route_url, Dialect d) {
  std::string out(route_url);
  out += dialect_spec(d).sdk_base_suffix;
  return out;
}

namespace {
// The end of a JSON string's plain run: its closing quote, an escape, or a byte that needs one.
const char* plain_json_run_end(const char* p, const char* end) {
  using namespace byte_scan;
  return run_end<quote | backslash | unprintable>(p, end);
}

// std::isspace of the "C" locale (the program never sets another), without a library call per byte.
// One test of a bit mask (bits 9-13 and 32) rather than three comparisons.
bool space_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  return u <= ' ' && ((std::uint64_t{0x100003e00} >> u) & 1) != 0;
}
}  // namespace

std::vector<std::string> split_tokens(std::string_view text) {
  std::vector<std::string> out;
  out.reserve(static_cast<std::size_t>(count_words(text)) + 1);  // one allocation for the list
  std::size_t i = 0;
  const auto space = [&](std::size_t k) { return space_char(text[k]); };
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
  // A word starts at a byte that is not a space after one that is (or at the start): no branch per byte.
  int n = 0;
  bool after_space = true;
  for (char c : text) {
    const bool sp = space_char(c);
    n += static_cast<int>(after_space && !sp);
    after_space = sp;
  }
  return n;
}

std::string Answer::text() const {
  std::size_t n = 0;
  for (const auto& t : tokens) n += t.size();
  std::string out;
  out.reserve(n);
  for (const auto& t : tokens) out += t;
  return out;
}

int Answer::output_tokens() const {
  return tool_name.empty() ? static_cast<int>(tokens.size()) : 1;
}

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

namespace {
constexpr std::uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;

// Whether one of the 8 bytes of `w` needs an escape in a JSON string (below 0x20, '"', '\\', 0x7f and
// up: plain_json_run_end's stops), by word arithmetic: the "has a byte less than / more than / equal to"
// bit tricks, each exact as a yes or no.
bool word_needs_escape(std::uint64_t w) {
  const auto has_zero_byte = [](std::uint64_t v) { return (v - ones) & ~v & highs; };
  const std::uint64_t below_space = (w - ones * 0x20) & ~w & highs;
  const std::uint64_t above_tilde = ((w + ones) | w) & highs;
  return (below_space | above_tilde | has_zero_byte(w ^ (ones * '"')) | has_zero_byte(w ^ (ones * '\\'))) !=
         0;
}

template <class Word>
std::uint64_t load(const char* p) {
  Word w;
  std::memcpy(&w, p, sizeof w);
  return w;
}
}  // namespace

bool plain_json_text(std::string_view s) {
  // The strings of an answer are short (its id, the model, the words of its text), and a test per byte
  // (plain_json_run_end's tail below 16 bytes) cost about 870 instructions a plain answer: here 8 bytes
  // a test, the ends read as overlapping words, so no byte is tested alone (about 390).
  const char* p = s.data();
  const std::size_t n = s.size();
  if (n >= 8) {
    for (std::size_t i = 0; i + 8 <= n; i += 8)
      if (word_needs_escape(load<std::uint64_t>(p + i))) return false;
    return n % 8 == 0 || !word_needs_escape(load<std::uint64_t>(p + n - 8));
  }
  if (n >= 4) return !word_needs_escape(load<std::uint32_t>(p) | load<std::uint32_t>(p + n - 4) << 32);
  if (n == 0) return true;
  // 1 to 3 bytes: the first, middle and last cover them all; the rest of the word is spaces.
  const auto byte = [](char c) { return static_cast<std::uint64_t>(static_cast<unsigned char>(c)); };
  return !word_needs_escape((ones * ' ' & ~std::uint64_t{0xffffff}) | byte(p[0]) | byte(p[n / 2]) << 8 |
                            byte(p[n - 1]) << 16);
}

JsonString::JsonString(std::string_view s) : one_(s), size_(s.size() + 2) {
  if (!plain_json_text(s)) {
    escaped_ = json::serialize(json::string_view(s.data(), s.size()));
    size_ = escaped_.size();
  }
}

JsonString::JsonString(const std::vector<std::string>& parts) : parts_(&parts), size_(2) {
  bool plain = true;
  for (const auto& p : parts) {
    plain = plain && plain_json_text(p);
    size_ += p.size();
  }
  if (!plain) {
    std::string joined;
    joined.reserve(size_);
    for (const auto& p : parts) joined += p;
    escaped_ = json::serialize(json::string_view(joined.data(), joined.size()));
    size_ = escaped_.size();
  }
}

char* JsonString::write(char* at) const {
  const auto put = [&at](std::string_view s) {
    std::memcpy(at, s.data(), s.size());
    at += s.size();
  };
  if (!escaped_.empty()) {  // a serialized literal is never empty: it has its quotes
    put(escaped_);
    return at;
  }
  *at++ = '"';
  if (parts_)
    for (const auto& p : *parts_) put(p);
  else
    put(one_);
  *at++ = '"';
  return at;
}

std::string_view path_only(std::string_view target) {
  return target.substr(0, target.find('?'));
}

std::string_view query_of(std::string_view target) {
  auto q = target.find('?');
  return q == std::string_view::npos ? std::string_view{} : target.substr(q + 1);
}

bool models_list(ParsedRequest& out, std::string_view method, std::string_view path,
                 std::initializer_list<std::string_view> paths) {
  if (std::find(paths.begin(), paths.end(), path) == paths.end()) return false;
  if (method != "GET") out.error = RequestError::method_not_allowed;
  out.models_list = true;
  return true;
}

bool accept_post(ParsedRequest& out, std::string_view method, std::string_view path, bool served) {
  if (!served) {
    out.error = RequestError::not_found;
    out.detail = std::string(path);
    return false;
  }
  if (method != "POST") {
    out.error = RequestError::method_not_allowed;
    out.detail = std::string(method);
    return false;
  }
  return true;
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

const json::object* read_request(std::string_view body, json::value& storage, ParsedRequest& out,
                                 bool members) {
  const auto* o = parse_body(body, storage, out);
  if (o && members) {
    out.chat.stream = bool_member(*o, "stream");
    out.chat.model = str_member(*o, "model");
  }
  return o;
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

const json::object* first_object(const json::object& o, std::string_view array_key) {
  const auto* a = o.if_contains(array_key);
  if (!a || !a->is_array() || a->get_array().empty() || !a->get_array()[0].is_object()) return nullptr;
  return &a->get_array()[0].get_object();
}

bool non_empty_string(const json::object& o, std::string_view key) {
  const auto* v = o.if_contains(key);
  return v && v->is_string() && !v->get_string().empty();
}

std::string_view event_type(std::string_view event, const json::object& data) {
  if (const auto* t = data.if_contains("type"); t && t->is_string()) return t->get_string();
  return event;
}

namespace {
// The strict scanner behind scan_chat_request: every function returns false on anything outside the
// plain subset, and the caller then falls back to the full parser.
class PlainJson {
 public:
  explicit PlainJson(std::string_view text) : p_(text.data()), end_(text.data() + text.size()) {}

  bool chat(ChatScan& out) {
    ws();
    if (p_ == end_ || *p_ != '{') return false;
    ++p_;
    Keys keys;
    ws();
    if (p_ < end_ && *p_ == '}') return ++p_, finish();
    for (;;) {
      std::string_view key;
      if (!member_key(key, keys)) return false;
      if (key == "model") {
        if (p_ < end_ && *p_ == '"') {
          if (!string(out.model)) return false;
        } else if (!skip(1, nullptr)) {
          return false;
        }
      } else if (key == "stream") {
        const bool is_true = end_ - p_ >= 4 && std::string_view(p_, 4) == "true";
        if (!skip(1, nullptr)) return false;
        out.stream = is_true;
      } else if (key == "stream_options") {
        if (p_ < end_ && *p_ == '{') {
          if (!stream_options(out)) return false;
        } else if (!skip(1, nullptr)) {
          return false;
        }
      } else if (key == "tools") {
        out.has_tools = true;
        if (!skip(1, nullptr)) return false;
      } else if (key == "messages") {
        if (p_ < end_ && *p_ == '[') {
          if (!messages(out)) return false;
        } else if (!skip(1, nullptr)) {
          return false;
        }
      } else if (!skip(1, nullptr)) {
        return false;
      }
      if (!next_member()) return false;
      if (closed_) return finish();
    }
  }

 private:
  static constexpr int max_depth = 16;  // the full parser allows 32: deeper bodies go to it
  static constexpr std::size_t max_keys = 16;

  // Keys of one object, to refuse duplicates (which the full parser resolves its own way). Plain
  // pointers and sizes, not string_views: the array is not zeroed for each object (34 Ir each).
  struct Keys {
    struct Key {
      const char* data;
      std::size_t size;
    };
    std::array<Key, max_keys> seen;
    std::size_t n = 0;
    bool add(std::string_view k) {
      if (n == max_keys) return false;
      for (std::size_t i = 0; i < n; ++i)
        if (std::string_view(seen[i].data, seen[i].size) == k) return false;
      seen[n++] = {k.data(), k.size()};
      return true;
    }
  };

  void ws() {
    while (p_ < end_ && (*p_ == ' ' || *p_ == '\n' || *p_ == '\r' || *p_ == '\t')) ++p_;
  }
  bool finish() {
    ws();
    return p_ == end_;
  }
  // A string with no escape and printable ASCII only; p_ is at its opening quote.
  bool string(std::string_view& out) {
    const char* s = ++p_;
    p_ = plain_json_run_end(p_, end_);
    if (p_ == end_ || *p_ != '"') return false;  // an escape, a control or non-ASCII byte, or no end
    out = std::string_view(s, static_cast<std::size_t>(p_ - s));
    ++p_;
    return true;
  }
  // -?digits(.digits)? with at most 15 digits: exact in a double, as the full parser reads it.
  bool number() {
    if (p_ < end_ && *p_ == '-') ++p_;
    int digits = 0;
    if (p_ < end_ && *p_ == '0') {
      ++p_, ++digits;
    } else {
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_, ++digits;
    }
    if (digits == 0) return false;
    if (p_ < end_ && *p_ == '.') {
      ++p_;
      int frac = 0;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') ++p_, ++frac;
      if (frac == 0) return false;
      digits += frac;
    }
    if (p_ < end_ && (*p_ == 'e' || *p_ == 'E')) return false;
    return digits <= 15;
  }
  bool literal(std::string_view word) {
    if (end_ - p_ < static_cast<std::ptrdiff_t>(word.size()) || std::string_view(p_, word.size()) != word)
      return false;
    p_ += word.size();
    return true;
  }
  // "key" ws ':' ws, p_ at the key's quote (after ws).
  bool member_key(std::string_view& key, Keys& keys) {
    if (p_ >= end_ || *p_ != '"' || !string(key) || !keys.add(key)) return false;
    ws();
    if (p_ >= end_ || *p_ != ':') return false;
    ++p_;
    ws();
    return true;
  }
  // After a member or element: ',' (more follow) or the closing bracket (closed_ set).
  bool next_member(char close = '}') {
    ws();
    closed_ = false;
    if (p_ < end_ && *p_ == ',') {
      ++p_;
      ws();
      return true;
    }
    if (p_ < end_ && *p_ == close) {
      ++p_;
      closed_ = true;
      return true;
    }
    return false;
  }
  // A string value; counts its words into *words when given.
  bool string_value(int* words) {
    std::string_view s;
    if (!string(s)) return false;
    if (words) *words += count_words(s);
    return true;
  }
  // A message member's value: a string (the common case) without skip's frame (set up for objects:
  // 60 Ir a call), anything else through skip.
  bool member_value(int depth, int* words) {
    return p_ < end_ && *p_ == '"' ? string_value(words) : skip(depth, words);
  }
  // Any value; counts the words of its strings (values, not keys) into *words when given.
  bool skip(int depth, int* words) {
    if (p_ >= end_ || depth > max_depth) return false;
    switch (*p_) {
      case '"':
        return string_value(words);
      case '{': {
        ++p_;
        ws();
        if (p_ < end_ && *p_ == '}') return ++p_, true;
        Keys keys;
        for (;;) {
          std::string_view key;
          if (!member_key(key, keys) || !skip(depth + 1, words) || !next_member()) return false;
          if (closed_) return true;
        }
      }
      case '[': {
        ++p_;
        ws();
        if (p_ < end_ && *p_ == ']') return ++p_, true;
        for (;;) {
          if (!skip(depth + 1, words) || !next_member(']')) return false;
          if (closed_) return true;
        }
      }
      case 't':
        return literal("true");
      case 'f':
        return literal("false");
      case 'n':
        return literal("null");
      default:
        return number();
    }
  }
  bool stream_options(ChatScan& out) {
    ++p_;
    ws();
    if (p_ < end_ && *p_ == '}') return ++p_, true;
    Keys keys;
    for (;;) {
      std::string_view key;
      if (!member_key(key, keys)) return false;
      const bool is_true = end_ - p_ >= 4 && std::string_view(p_, 4) == "true";
      if (!skip(2, nullptr)) return false;
      if (key == "include_usage") out.include_usage = is_true;
      if (!next_member()) return false;
      if (closed_) return true;
    }
  }
  // The messages array: words of every string value, and the last element's role.
  bool messages(ChatScan& out) {
    out.messages_array = true;
    ++p_;
    ws();
    if (p_ < end_ && *p_ == ']') return ++p_, true;
    for (;;) {
      out.last_is_object = p_ < end_ && *p_ == '{';
      out.last_role = {};
      if (out.last_is_object) {
        ++p_;
        ws();
        if (p_ < end_ && *p_ == '}') {
          ++p_;
        } else {
          Keys keys;
          for (;;) {
            std::string_view key;
            if (!member_key(key, keys)) return false;
            const char* value = p_;
            if (!member_value(3, &out.message_words)) return false;
            if (key == "role" && *value == '"')
              out.last_role = std::string_view(value + 1, static_cast<std::size_t>(p_ - value - 2));
            if (!next_member()) return false;
            if (closed_) break;
          }
        }
      } else if (!skip(2, &out.message_words)) {
        return false;
      }
      if (!next_member(']')) return false;
      if (closed_) return true;
    }
  }

  const char* p_;
  const char* end_;
  bool closed_ = false;
};
}  // namespace

bool scan_chat_request(std::string_view body, ChatScan& out) {
  out = ChatScan{};
  PlainJson scan(body);
  return scan.chat(out);
}

int words_in(const json::value& v) {
  switch (v.kind()) {
    case json::kind::string:
      return count_words(v.get_string());
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
    default:
      return 0;
  }
}

}  // namespace detail
}  // namespace llmchaos::mock
