#include "llmchaos/core/toml_reader.hpp"

#include <fmt/format.h>

#include <boost/json.hpp>
#include <cmath>

#include "llmchaos/core/file_text.hpp"

namespace llmchaos {

namespace {

// toml++ recurses once per level of a document (parsing, building and destroying it): a long enough
// dotted key (`[a.a.a...b]`, `a.a...b = 1`) or deep enough nesting overflows the stack. This scan bounds
// the depth before the text reaches toml++: every table header part, key part, array and inline table
// is one level. It rejects depth only; whatever else it does not understand is left to toml++.
// Regression inputs: tests/fuzz/corpus/fuzz_case_loader/crash_deep_*.
class DepthScan {
 public:
  DepthScan(std::string_view text, const std::string& file) : s_(text), file_(file) {}

  void run() {
    while (!at_end()) {
      skip_blanks();
      if (at_end()) break;
      const char c = s_[i_];
      if (c == '\n' || c == '\r') {
        next();
      } else if (c == '#') {
        skip_comment();
      } else if (c == '[') {  // [table] or [[array.of.tables]]
        next();
        if (!at_end() && s_[i_] == '[') next();
        header_depth_ = key(0);
        skip_line();
      } else {
        const std::size_t before = i_;
        const int depth = key(header_depth_);
        if (!at_end() && s_[i_] == '=') {
          next();
          value(depth);
        } else if (i_ == before) {
          next();  // not a key: toml++ reports it
        }
      }
    }
  }

 private:
  struct Open {
    char kind;  // '[' array, '{' inline table
    int depth;  // the container's own level
  };

  bool at_end() const { return i_ >= s_.size(); }
  void next() {
    if (s_[i_] == '\n') {
      ++line_;
      line_start_ = i_ + 1;
    }
    ++i_;
  }
  void check(int depth, std::size_t line, std::size_t column, std::string_view what) const {
    if (depth > toml_depth_limit)
      throw SpecError({file_, static_cast<int>(line), static_cast<int>(column)},
                      fmt::format("{} nested too deep (limit {})", what, toml_depth_limit));
  }
  void skip_blanks() {
    while (!at_end() && (s_[i_] == ' ' || s_[i_] == '\t')) next();
  }
  void skip_comment() {
    while (!at_end() && s_[i_] != '\n') next();
  }
  void skip_line() {
    while (!at_end() && s_[i_] != '\n') {
      if (s_[i_] == '"' || s_[i_] == '\'')
        skip_string();
      else if (s_[i_] == '#')
        skip_comment();
      else
        next();
    }
  }
  static bool bare(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
  }
  // A basic or literal string, single- or multi-line (up to two quotes may end the content of a
  // multi-line one); an unterminated single-line string ends at its line's end.
  void skip_string() {
    const char q = s_[i_];
    const std::string_view triple = q == '"' ? std::string_view("\"\"\"") : std::string_view("'''");
    const bool multi = s_.substr(i_, 3) == triple;
    for (int k = 0; k < (multi ? 3 : 1); ++k) next();
    while (!at_end()) {
      const char c = s_[i_];
      if (c == '\\' && q == '"' && i_ + 1 < s_.size()) {
        next();
        next();
      } else if (!multi && c == q) {
        next();
        return;
      } else if (multi && s_.substr(i_, 3) == triple) {
        for (int k = 0; k < 3; ++k) next();
        for (int k = 0; k < 2 && !at_end() && s_[i_] == q; ++k) next();
        return;
      } else if (!multi && c == '\n') {
        return;
      } else {
        next();
      }
    }
  }
  // A (dotted) key; returns base + its parts, checked against the limit at the key's first character.
  int key(int base) {
    skip_blanks();
    const std::size_t line = line_, column = i_ - line_start_ + 1;
    int parts = 1;
    while (!at_end()) {
      if (s_[i_] == '"' || s_[i_] == '\'')
        skip_string();
      else
        while (!at_end() && bare(s_[i_])) next();
      skip_blanks();
      if (at_end() || s_[i_] != '.') break;
      next();
      skip_blanks();
      check(base + ++parts, line, column, "key");
    }
    check(base + parts, line, column, "key");
    return base + parts;
  }
  // A value at level `depth`: its arrays and inline tables (and the keys inside those) nest deeper.
  void value(int depth) {
    std::vector<Open> open;
    int level = depth;  // the level of what comes next
    while (!at_end()) {
      const char c = s_[i_];
      if (c == '"' || c == '\'') {
        skip_string();
      } else if (c == '[' || c == '{') {
        check(level + 1, line_, i_ - line_start_ + 1, "value");
        open.push_back({c, level + 1});
        level += 1;
        next();
        if (c == '{') level = inline_key(open.back());
      } else if (c == ']' || c == '}') {
        if (open.empty()) return;  // toml++ reports it
        open.pop_back();
        level = open.empty() ? depth : open.back().depth;
        next();
      } else if (c == ',') {
        next();
        if (!open.empty()) level = open.back().kind == '{' ? inline_key(open.back()) : open.back().depth;
      } else if (c == '#') {
        skip_comment();
      } else if (c == '\n') {
        if (open.empty()) return;
        next();
      } else {
        next();
      }
    }
  }
  // The key after `{` or `,` in an inline table; returns the level of its value.
  int inline_key(const Open& table) {
    skip_blanks();
    if (at_end() || s_[i_] == '}') return table.depth;
    const int level = key(table.depth);
    if (!at_end() && s_[i_] == '=') next();
    return level;
  }

  std::string_view s_;
  const std::string& file_;
  std::size_t i_ = 0;
  std::size_t line_ = 1;
  std::size_t line_start_ = 0;
  int header_depth_ = 0;
};

}  // namespace

void check_toml_depth(std::string_view text, const std::string& source_name) {
  DepthScan(text, source_name).run();
}

toml::table parse_toml(std::string_view text, const std::string& source_name) {
  check_toml_depth(text, source_name);
  try {
    return toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    const auto& src = e.source();
    throw SpecError({source_name, static_cast<int>(src.begin.line), static_cast<int>(src.begin.column)},
                    std::string(e.description()));
  }
}

toml::table parse_toml_file(const std::string& path) {
  return parse_toml(read_file_text(path), path);
}

namespace {
void json_into(const boost::json::value& v, toml::array& out);

toml::table json_object_to_table(const boost::json::object& obj) {
  toml::table t;
  for (const auto& [k, v] : obj) {
    std::string key(k);
    switch (v.kind()) {
      case boost::json::kind::object:
        t.insert(key, json_object_to_table(v.get_object()));
        break;
      case boost::json::kind::array: {
        toml::array a;
        for (const auto& e : v.get_array()) json_into(e, a);
        t.insert(key, std::move(a));
        break;
      }
      case boost::json::kind::string:
        t.insert(key, std::string(v.get_string()));
        break;
      case boost::json::kind::bool_:
        t.insert(key, v.get_bool());
        break;
      case boost::json::kind::int64:
        t.insert(key, v.get_int64());
        break;
      case boost::json::kind::uint64:
        t.insert(key, static_cast<std::int64_t>(v.get_uint64()));
        break;
      case boost::json::kind::double_:
        t.insert(key, v.get_double());
        break;
      case boost::json::kind::null:
        break;  // absent
    }
  }
  return t;
}

void json_into(const boost::json::value& v, toml::array& out) {
  switch (v.kind()) {
    case boost::json::kind::object:
      out.push_back(json_object_to_table(v.get_object()));
      break;
    case boost::json::kind::array: {
      toml::array a;
      for (const auto& e : v.get_array()) json_into(e, a);
      out.push_back(std::move(a));
      break;
    }
    case boost::json::kind::string:
      out.push_back(std::string(v.get_string()));
      break;
    case boost::json::kind::bool_:
      out.push_back(v.get_bool());
      break;
    case boost::json::kind::int64:
      out.push_back(v.get_int64());
      break;
    case boost::json::kind::uint64:
      out.push_back(static_cast<std::int64_t>(v.get_uint64()));
      break;
    case boost::json::kind::double_:
      out.push_back(v.get_double());
      break;
    case boost::json::kind::null:
      break;
  }
}
}  // namespace

toml::table json_to_toml(std::string_view json_text, const std::string& source_name) {
  boost::system::error_code ec;
  auto v = boost::json::parse(json_text, ec);
  if (ec) throw SpecError({source_name, 0, 0}, "invalid JSON: " + ec.message());
  if (!v.is_object()) throw SpecError({source_name, 0, 0}, "expected a JSON object at the top level");
  return json_object_to_table(v.get_object());
}

SourcePos pos_of(const toml::node& node, const std::string& fallback_file) {
  const auto& src = node.source();
  std::string file = src.path ? *src.path : fallback_file;
  return {file, static_cast<int>(src.begin.line), static_cast<int>(src.begin.column)};
}

TomlReader::TomlReader(const toml::table& table, std::string file, std::string context)
    : table_(table), file_(std::move(file)), context_(std::move(context)) {}

SourcePos TomlReader::pos() const {
  return pos_of(table_, file_);
}

SourcePos TomlReader::pos(std::string_view key) const {
  if (auto* n = table_.get(key)) return pos_of(*n, file_);
  return pos();
}

bool TomlReader::has(std::string_view key) const {
  return table_.contains(key);
}

std::string TomlReader::where(std::string_view key) const {
  return context_.empty() ? std::string(key) : context_ + "." + std::string(key);
}

void TomlReader::fail(std::string_view key, const std::string& message) const {
  throw SpecError(pos(key), fmt::format("{}: {}", where(key), message));
}

void TomlReader::fail_here(const std::string& message) const {
  throw SpecError(pos(), context_.empty() ? message : fmt::format("{}: {}", context_, message));
}

const toml::node* TomlReader::get(std::string_view key) {
  seen_.insert(std::string(key));
  return table_.get(key);
}

std::optional<std::string> TomlReader::opt_string(std::string_view key) {
  auto* n = get(key);
  if (!n) return std::nullopt;
  if (auto v = n->value<std::string>(); v && n->is_string()) return *v;
  fail(key, "expected a string");
}

std::optional<std::int64_t> TomlReader::opt_int(std::string_view key, std::int64_t min, std::int64_t max) {
  auto* n = get(key);
  if (!n) return std::nullopt;
  std::int64_t v = 0;
  if (n->is_integer()) {
    v = *n->value<std::int64_t>();
  } else if (const double d = n->is_floating_point() ? *n->value<double>() : 0.5;
             // Range first: casting a double outside int64 (1e300, inf, nan) to an integer is undefined
             // behaviour (UBSan float-cast-overflow; regression input
             // tests/fuzz/corpus/fuzz_case_loader/regress_int_from_huge_float). [-2^63, 2^63) converts
             // exactly.
             d >= -9223372036854775808.0 && d < 9223372036854775808.0 && d == std::trunc(d)) {
    v = static_cast<std::int64_t>(d);
  } else {
    fail(key, "expected an integer");
  }
  if (v < min || v > max) fail(key, fmt::format("{} is out of range [{}, {}]", v, min, max));
  return v;
}

std::optional<double> TomlReader::opt_number(std::string_view key, double min, double max) {
  auto* n = get(key);
  if (!n) return std::nullopt;
  if (!n->is_number()) fail(key, "expected a number");
  double v = *n->value<double>();
  // NaN compares false with both bounds: without this, `nan` passed every range check; no key means inf.
  if (!std::isfinite(v)) fail(key, fmt::format("must be a finite number (got {})", v));
  if (v < min || v > max) fail(key, fmt::format("{} is out of range [{}, {}]", v, min, max));
  return v;
}

std::optional<bool> TomlReader::opt_bool(std::string_view key) {
  auto* n = get(key);
  if (!n) return std::nullopt;
  if (!n->is_boolean()) fail(key, "expected true or false");
  return *n->value<bool>();
}

std::optional<std::vector<std::string>> TomlReader::opt_string_array(std::string_view key) {
  auto* n = get(key);
  if (!n) return std::nullopt;
  auto* arr = n->as_array();
  if (!arr) fail(key, "expected an array of strings");
  std::vector<std::string> out;
  for (const auto& e : *arr) {
    if (!e.is_string()) throw SpecError(pos_of(e, file_), where(key) + ": expected a string");
    out.push_back(*e.value<std::string>());
  }
  return out;
}

const toml::table* TomlReader::opt_table(std::string_view key) {
  auto* n = get(key);
  if (!n) return nullptr;
  if (auto* t = n->as_table()) return t;
  fail(key, "expected a table");
}

const toml::array* TomlReader::opt_array(std::string_view key) {
  auto* n = get(key);
  if (!n) return nullptr;
  if (auto* a = n->as_array()) return a;
  fail(key, "expected an array");
}

std::string TomlReader::req_string(std::string_view key) {
  auto v = opt_string(key);
  if (!v) fail_here(fmt::format("missing required key \"{}\"", key));
  return *v;
}

void TomlReader::reject_unknown_keys() {
  std::vector<SpecError> unknown;
  for (const auto& [k, v] : table_) {
    if (!seen_.contains(k.str()))
      unknown.emplace_back(pos_of(v, file_), fmt::format("{}: unknown key", where(k.str())));
  }
  throw_errors(std::move(unknown));
}

}  // namespace llmchaos
