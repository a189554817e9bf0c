#pragma once
// The gateway: an OpenAI-compatible endpoint over the client stack (gateway/README.md).
//   POST /v1/chat/completions  plain or "stream": true (OpenAI chunks); upstreams of any dialect
//   GET  /health, /stats (JSON), /metrics (Prometheus text)
//   POST /v1/llmchaos/drain    redeliver what the stacks queued (the harness's http driver uses it)
// Threading: one thread per connection (blocking Beast I/O, gateway/src/http_server.hpp). Requests
// overlap on a chain's client stack (it locks itself and lets go while an attempt is on the wire); auth,
// parsing and the rate limiter (thread-safe) answer without waiting for it. What to answer is decided
// by functions over plain data (gateway/src/admission.hpp, answers.hpp). No Beast types in this header.
#include <cstdint>
#include <memory>
#include <string>

#include "llmchaos/gateway/config.hpp"

namespace llmchaos::gateway {

class Gateway {
 public:
  explicit Gateway(GatewayConfig config);  // builds the stacks; throws on an impossible config
  ~Gateway();                              // stops
  Gateway(const Gateway&) = delete;
  Gateway& operator=(const Gateway&) = delete;

  void start();  // binds config.bind:config.port and serves on background threads; throws naming them
  // Stops accepting and closes every connection; true when every request thread ended within a
  // second (one stuck in an upstream call holds the gateway's state alive until it returns).
  bool stop();
  std::uint16_t port() const;
  std::string base_url() const;  // "http://HOST:PORT"

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;  // the request logic (shared with the connection threads) and the server
};

bool is_loopback_address(const std::string& address);

}  // namespace llmchaos::gateway
