// `llmchaos proxy`: which plans reach the upstream, and which request parts are credentials
// (proxy.hpp). Pure functions.
#include <algorithm>
#include <iterator>

#include "llmchaos/core/byte_scan.hpp"
#include "llmchaos/proxy/proxy.hpp"

namespace llmchaos::proxy {

// The mock's vocabulary (plans, the forward hook, dialects, scripts) the proxy is written in.
using mock::Plan;
using mock::WireAction;

bool forwards(const Plan& plan) {
  switch (plan.action) {
    case WireAction::respond:
      return plan.status >= 200 && plan.status < 300;
    case WireAction::hold:
      return plan.committed_on_arrival;  // post_commit_timeout: the provider does the work
    case WireAction::reset_after_head:
      return false;
  }
  return false;
}

bool secret_header(std::string_view name) {
  static constexpr std::string_view secrets[] = {"authorization", "proxy-authorization", "x-api-key",
                                                 "api-key",       "x-goog-api-key",      "cookie"};
  return std::find(std::begin(secrets), std::end(secrets), name) != std::end(secrets);
}

bool secret_query_param(std::string_view name) {
  std::string lower(name);
  for (auto& c : lower) c = byte_scan::ascii_lower(c);
  return lower == "key" || lower == "api_key" || lower == "api-key";
}

std::string redact_target(std::string_view target) {
  const auto q = target.find('?');
  if (q == std::string_view::npos) return std::string(target);
  std::string out(target.substr(0, q + 1));
  std::string_view query = target.substr(q + 1);
  bool first = true;
  while (true) {
    const auto amp = query.find('&');
    const auto param = query.substr(0, amp);
    const auto eq = param.find('=');
    if (!first) out += '&';
    first = false;
    if (eq != std::string_view::npos && secret_query_param(param.substr(0, eq)))
      out += std::string(param.substr(0, eq)) + "=REDACTED";
    else
      out += param;
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

}  // namespace llmchaos::proxy
