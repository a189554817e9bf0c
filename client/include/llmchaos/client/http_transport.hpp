#pragma once
// The live transport: an HTTP/1.1 client (Boost.Beast, C++20 coroutines) with keep-alive, speaking the
// route's dialect (dialect_codec.hpp) and reading SSE incrementally (sse.hpp). send() blocks its caller;
// the attempt runs on the transport's own io_context thread, so several callers may send at once.
// The attempt timeout covers the wait for the response head AND every idle gap of the body.
// No Beast/Asio types here (compile time): they live in http_transport.cpp.
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "llmchaos/client/transport.hpp"

namespace llmchaos::client {

struct HttpTransportOptions {
  std::string api_key = "llmchaos-test-key";  // sent in each dialect's auth header
  std::string user_agent = "llmchaos-client/0.1";
  double connect_timeout_ms = 2000;  // capped by the attempt timeout
  double side_effect_timeout_ms = 5000;
  std::size_t body_limit = 64 * 1024 * 1024;  // a longer answer is cut (stream_closed)
  std::size_t max_idle_per_host = 8;          // keep-alive connections kept per host:port
  std::vector<std::pair<std::string, std::string>>
      extra_headers;  // sent with every attempt (the http driver's --target-header)
};

struct HttpTransportStats {
  int connects = 0;       // new TCP connections
  int reused = 0;         // attempts sent on a kept-alive connection
  int stale_dropped = 0;  // kept-alive connections found closed by the server before use
  int stale_resent = 0;   // a write on a kept-alive connection failed: resent once on a new one
};

class HttpTransport final : public Transport {
 public:
  explicit HttpTransport(HttpTransportOptions options = {});
  ~HttpTransport() override;
  HttpTransport(const HttpTransport&) = delete;
  HttpTransport& operator=(const HttpTransport&) = delete;

  // Never throws for network trouble: it comes back as AttemptResult::event / error, naming the route.
  AttemptResult send(const AttemptRequest& req, Clock& clock,
                     const std::function<void(std::string_view token)>& on_token) override;
  // POST {base_url}/__llmchaos/side_effect {"operation_id", "tool"} (the mock records it).
  bool side_effect(const Endpoint& endpoint, const std::string& operation_id,
                   const std::string& tool) override;

  HttpTransportStats stats() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmchaos::client
