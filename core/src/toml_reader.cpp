#include "llmchaos/core/toml_reader.hpp"

#include <cmath>
#include <fstream>
#include <sstream>

#include <boost/json.hpp>
#include <fmt/format.h>

namespace llmchaos {

toml::table parse_toml(std::string_view text, const std::string& source_name) {
  try {
    return toml::parse(text, source_name);
  } catch (const toml::parse_error& e) {
    const auto& src = e.source();
    throw SpecError({source_name, static_cast<int>(src.begin.line), static_cast<int>(src.begin.column)},
                    std::string(e.description()));
  }
}

toml::table parse_toml_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw SpecError({path, 0, 0}, "cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  return parse_toml(ss.str(), path);
}

namespace {
void json_into(const boost::json::value& v, toml::array& out);

toml::table json_object_to_table(const boost::json::object& obj) {
  toml::table t;
  for (const auto& [k, v] : obj) {
    std::string key(k);
    switch (v.kind()) {
      case boost::json::kind::object: t.insert(key, json_object_to_table(v.get_object())); break;
      case boost::json::kind::array: {
        toml::array a;
        for (const auto& e : v.get_array()) json_into(e, a);
        t.insert(key, std::move(a));
        break;
      }
      case boost::json::kind::string: t.insert(key, std::string(v.get_string())); break;
      case boost::json::kind::bool_: t.insert(key, v.get_bool()); break;
      case boost::json::kind::int64: t.insert(key, v.get_int64()); break;
      case boost::json::kind::uint64: t.insert(key, static_cast<std::int64_t>(v.get_uint64())); break;
      case boost::json::kind::double_: t.insert(key, v.get_double()); break;
      case boost::json::kind::null: break;  // absent
    }
  }
  return t;
}

void json_into(const boost::json::value& v, toml::array& out) {
  switch (v.kind()) {
    case boost::json::kind::object: out.push_back(json_object_to_table(v.get_object())); break;
    case boost::json::kind::array: {
      toml::array a;
      for (const auto& e : v.get_array()) json_into(e, a);
      out.push_back(std::move(a));
      break;
    }
    case boost::json::kind::string: out.push_back(std::string(v.get_string())); break;
    case boost::json::kind::bool_: out.push_back(v.get_bool()); break;
    case boost::json::kind::int64: out.push_back(v.get_int64()); break;
    case boost::json::kind::uint64: out.push_back(static_cast<std::int64_t>(v.get_uint64())); break;
    case boost::json::kind::double_: out.push_back(v.get_double()); break;
    case boost::json::kind::null: break;
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

SourcePos TomlReader::pos() const { return pos_of(table_, file_); }

SourcePos TomlReader::pos(std::string_view key) const {
  if (auto* n = table_.get(key)) return pos_of(*n, file_);
  return pos();
}

bool TomlReader::has(std::string_view key) const { return table_.contains(key); }

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
             // tests/fuzz/corpus/fuzz_case_loader/regress_int_from_huge_float). [-2^63, 2^63) converts exactly.
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
  for (const auto& [k, v] : table_) {
    if (!seen_.contains(k.str()))
      throw SpecError(pos_of(v, file_), fmt::format("{}: unknown key", where(k.str())));
  }
}

}  // namespace llmchaos
