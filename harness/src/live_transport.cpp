// The live transport: the client stack's Beast HTTP/1.1 + SSE client over loopback.
#include "llmchaos/client/http_transport.hpp"
#include "llmchaos/harness/runner.hpp"

namespace llmchaos::harness {

TransportFactory live_transport() {
  // One per case: its keep-alive pool belongs to that case's stack, like a real client's.
  return [](const CaseEnv&) -> std::unique_ptr<client::Transport> {
    return std::make_unique<client::HttpTransport>();
  };
}

}  // namespace llmchaos::harness
