#include "llmchaos/core/redact.hpp"

#include <algorithm>
#include <array>
#include <cctype>

namespace llmchaos {
namespace {

constexpr std::array<std::string_view, 7> credential_names = {
    "key", "api_key", "api-key", "apikey", "x-api-key", "access_token", "authorization"};

bool is_credential(std::string_view name) {
  return std::any_of(credential_names.begin(), credential_names.end(), [&](std::string_view c) {
    return c.size() == name.size() && std::equal(c.begin(), c.end(), name.begin(), [](char a, char b) {
             return a == std::tolower(static_cast<unsigned char>(b));
           });
  });
}

}  // namespace

std::string without_credentials(std::string_view target) {
  const auto query = target.find('?');
  if (query == std::string_view::npos) return std::string(target);
  std::string out(target.substr(0, query + 1));
  std::string_view rest = target.substr(query + 1);
  while (true) {
    const auto amp = rest.find('&');
    const auto param = rest.substr(0, amp);
    const auto eq = param.find('=');
    if (eq != std::string_view::npos && is_credential(param.substr(0, eq))) {
      out.append(param.substr(0, eq + 1));
      out.append(redacted_value);
    } else {
      out.append(param);
    }
    if (amp == std::string_view::npos) break;
    out += '&';
    rest = rest.substr(amp + 1);
  }
  return out;
}

}  // namespace llmchaos
