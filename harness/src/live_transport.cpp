// The live transport: the client stack's Beast HTTP/1.1 + SSE client over loopback.
#include <stdexcept>

#include "llmchaos/harness/runner.hpp"

#if __has_include("llmchaos/client/http_transport.hpp")
#include "llmchaos/client/http_transport.hpp"
#define LLMCHAOS_HAVE_HTTP_TRANSPORT 1
#endif

namespace llmchaos::harness {

TransportFactory live_transport() {
#ifdef LLMCHAOS_HAVE_HTTP_TRANSPORT
  return [] { return std::make_unique<client::HttpTransport>(); };
#else
  return []() -> std::unique_ptr<client::Transport> { throw std::runtime_error("the HTTP transport is not built yet"); };
#endif
}

}  // namespace llmchaos::harness
