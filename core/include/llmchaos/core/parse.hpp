#pragma once
// Whole-text number parsing for wire and header values: the text is the number, nothing before or after.
#include <charconv>
#include <optional>
#include <string_view>

namespace llmchaos {

// A decimal int making up all of `s` (no blanks, no '+'); nullopt otherwise, or when out of range.
inline std::optional<int> parse_int(std::string_view s) {
  int v = 0;
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

}  // namespace llmchaos
