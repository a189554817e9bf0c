#pragma once
// What every forwarder of the proxy (the upstream's, the cassettes') answers the server alike: which
// plans reach the provider and the target the ledger sees are the proxy's rules (proxy.hpp), whoever
// supplies the answer.
#include <string>
#include <string_view>

#include "llmchaos/mockprovider/forward_hook.hpp"
#include "llmchaos/proxy/proxy.hpp"

namespace llmchaos::proxy {

class ProxyForwarder : public mock::Forwarder {
 public:
  bool forwards_plan(const mock::Plan& plan) const final { return forwards(plan); }
  void mask_ledger_target(std::string& target) const final {
    if (target.find('?') != std::string::npos) target = redact_target(target);
  }
};

}  // namespace llmchaos::proxy
