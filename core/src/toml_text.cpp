#include "llmchaos/core/toml_text.hpp"

#include <fmt/format.h>

namespace llmchaos {

std::string toml_escaped(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f)
          out += fmt::format("\\u{:04x}", static_cast<int>(static_cast<unsigned char>(ch)));
        else
          out += ch;
    }
  }
  return out;
}

std::string toml_string(std::string_view s) {
  return "\"" + toml_escaped(s) + "\"";
}

}  // namespace llmchaos
