#pragma once
// Validating reader over a toml++ table: typed getters that throw SpecError with file:line:col,
// and a final check that rejects unknown keys (typos must not pass silently).
// Used by the script, policy and case loaders alike.
#include <toml++/toml.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/core/types.hpp"

namespace llmchaos {

// Levels a document may nest (table header parts + key parts + arrays and inline tables): deeper text
// is a SpecError "file:line:col: key nested too deep (limit N)" (or "value ..."), checked before toml++
// sees it (toml++ recurses per level; a 100,000-part dotted key overflowed the stack).
inline constexpr int toml_depth_limit = 64;
void check_toml_depth(std::string_view text, const std::string& source_name);
// Parse TOML text (depth checked first); a syntax error becomes SpecError at its position.
toml::table parse_toml(std::string_view text, const std::string& source_name);
toml::table parse_toml_file(const std::string& path);
// JSON text -> the same table shape (so admin PUT accepts JSON); positions are unknown in JSON.
toml::table json_to_toml(std::string_view json_text, const std::string& source_name);

SourcePos pos_of(const toml::node& node, const std::string& fallback_file);

class TomlReader {
 public:
  // `context` prefixes messages, e.g. "route.primary".
  TomlReader(const toml::table& table, std::string file, std::string context = {});

  const toml::table& table() const { return table_; }
  const std::string& file() const { return file_; }
  SourcePos pos() const;
  SourcePos pos(std::string_view key) const;
  bool has(std::string_view key) const;

  std::optional<std::string> opt_string(std::string_view key);
  std::optional<std::int64_t> opt_int(std::string_view key, std::int64_t min = INT64_MIN,
                                      std::int64_t max = INT64_MAX);
  std::optional<double> opt_number(std::string_view key, double min = -1e300, double max = 1e300);
  std::optional<bool> opt_bool(std::string_view key);
  std::optional<std::vector<std::string>> opt_string_array(std::string_view key);
  const toml::table* opt_table(std::string_view key);
  const toml::array* opt_array(std::string_view key);

  std::string req_string(std::string_view key);

  template <class E>
  std::optional<E> opt_enum(std::string_view key) {
    auto s = opt_string(key);
    if (!s) return std::nullopt;
    auto v = parse_enum<E>(*s);
    if (!v) fail(key, "unknown value \"" + *s + "\" (expected one of: " + enum_choices<E>() + ")");
    return v;
  }

  // Mark keys as handled elsewhere (sub-tables read by another reader).
  void allow(std::string_view key) { seen_.insert(std::string(key)); }
  // Throw on the keys no getter asked for (every one of them: SpecErrors when more than one).
  void reject_unknown_keys();

  [[noreturn]] void fail(std::string_view key, const std::string& message) const;
  [[noreturn]] void fail_here(const std::string& message) const;

 private:
  const toml::node* get(std::string_view key);
  std::string where(std::string_view key) const;

  const toml::table& table_;
  std::string file_;
  std::string context_;
  std::set<std::string, std::less<>> seen_;
};

}  // namespace llmchaos
