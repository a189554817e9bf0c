#pragma once
// A mock server on 127.0.0.1:0 for the loopback tests, with helpers to script it and read its ledger.
#include <chrono>
#include <string>
#include <thread>

#include "llmchaos/mockprovider/server.hpp"
#include "llmchaos/net/http_call.hpp"
#include "wire_client.hpp"

namespace llmchaos::test {

struct TestServer {
  explicit TestServer(mock::ServerOptions options = {}) : server(std::move(options)) { server.start(); }
  mock::MockServer server;

  std::uint16_t port() { return server.port(); }
  mock::Engine& engine() { return server.engine(); }
  void install(const std::string& ns, const std::string& toml) {
    engine().install(ns, mock::parse_script_text(toml, "test.toml"));
  }
  WireReply send(const std::string& method, const std::string& target, const std::string& body = {},
                 const std::vector<std::pair<std::string, std::string>>& headers = {},
                 double timeout_ms = 5000) {
    return wire_exchange(port(), http_request(method, target, body, headers), timeout_ms);
  }
  // One admin or provider call through the product's own HTTP client (status, headers, body).
  ::llmchaos::net::HttpReply call(const std::string& method, const std::string& target,
                                  const std::string& body = {},
                                  std::vector<std::pair<std::string, std::string>> headers = {}) {
    ::llmchaos::net::HttpCall c;
    c.port = port();
    c.method = method;
    c.target = target;
    c.body = body;
    c.headers = std::move(headers);
    return ::llmchaos::net::http_call(c);
  }
  WireReply chat(Dialect d, const std::string& base, bool stream, const std::string& extra = {},
                 const std::vector<std::pair<std::string, std::string>>& headers = {},
                 double timeout_ms = 5000) {
    const auto call = chat_call(d, base, stream, extra);
    return send("POST", call.target, call.body, headers, timeout_ms);
  }
  // The namespace's ledger once it holds `n` entries, all finished (bounded wait: the server finishes an
  // entry right after its last byte, which can be a moment after the client saw the close).
  std::vector<LedgerEntry> ledger(const std::string& ns, std::size_t n) {
    std::vector<LedgerEntry> l;
    for (int i = 0; i < 500; ++i) {
      l = engine().ledger(ns);
      bool done = l.size() >= n;
      for (const auto& e : l) done = done && e.finished;
      if (done) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return l;
  }
};

inline std::string route_toml(Dialect d, const std::string& steps, const std::string& extra = {}) {
  return "[route.r]\ndialect = \"" + std::string(to_string(d)) + "\"\ntext = \"alpha beta gamma delta\"\n" +
         extra + "script = [" + steps + "]\n";
}

inline const char* request_id_header(Dialect d) {
  if (d == Dialect::bedrock) return "x-amzn-requestid";
  return d == Dialect::anthropic ? "request-id" : "x-request-id";
}

}  // namespace llmchaos::test
