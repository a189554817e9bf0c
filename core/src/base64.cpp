// Base64 (base64.hpp).
#include "llmchaos/core/base64.hpp"

#include <array>

namespace llmchaos::base64 {
namespace {

constexpr std::string_view alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Each byte's 6-bit value, or -1 when it is not in the alphabet.
constexpr std::array<signed char, 256> values() {
  std::array<signed char, 256> v{};
  for (auto& x : v) x = -1;
  for (std::size_t i = 0; i < alphabet.size(); ++i)
    v[static_cast<unsigned char>(alphabet[i])] = static_cast<signed char>(i);
  return v;
}
constexpr auto value_of = values();

}  // namespace

std::string encode(std::string_view in) {
  std::string out;
  out.reserve((in.size() + 2) / 3 * 4);
  for (std::size_t i = 0; i < in.size(); i += 3) {
    const auto byte = [&](std::size_t k) {
      return k < in.size() ? static_cast<unsigned>(static_cast<unsigned char>(in[k])) : 0u;
    };
    const unsigned n = byte(i) << 16 | byte(i + 1) << 8 | byte(i + 2);
    out += alphabet[n >> 18 & 63];
    out += alphabet[n >> 12 & 63];
    out += i + 1 < in.size() ? alphabet[n >> 6 & 63] : '=';
    out += i + 2 < in.size() ? alphabet[n & 63] : '=';
  }
  return out;
}

std::optional<std::string> decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::size_t pad = 0;
  while (pad < 2 && pad < text.size() && text[text.size() - 1 - pad] == '=') ++pad;
  std::string out;
  out.reserve(text.size() / 4 * 3);
  unsigned bits = 0;
  int held = 0;
  for (std::size_t i = 0; i < text.size() - pad; ++i) {
    const int v = value_of[static_cast<unsigned char>(text[i])];
    if (v < 0) return std::nullopt;
    bits = bits << 6 | static_cast<unsigned>(v);
    held += 6;
    if (held >= 8) {
      held -= 8;
      out += static_cast<char>(bits >> held & 0xff);
    }
  }
  return out;
}

}  // namespace llmchaos::base64
