#pragma once
// The real mock provider and a gateway over it, both on 127.0.0.1:0, for the gateway's loopback tests.
#include <fmt/format.h>

#include <boost/json.hpp>
#include <string>
#include <vector>

#include "llmchaos/gateway/gateway.hpp"
#include "llmchaos/mockprovider/server.hpp"
#include "llmchaos/net/http_call.hpp"

namespace llmchaos::test {

struct GatewayWorld {
  // `script`: [route.NAME] tables for the mock (namespace "gw"); `config`: the gateway's TOML, in which
  // {mock} is replaced by the mock's base URL with the namespace ("http://127.0.0.1:P/gw").
  GatewayWorld(const std::string& script, const std::string& config)
      : mock([] {
          mock::ServerOptions o;
          o.threads = 2;
          return o;
        }()) {
    mock.start();
    mock.engine().install("gw", mock::parse_script_text(script, "script.toml"));
    std::string text = config;
    const std::string base = mock.base_url() + "/gw";
    for (auto at = text.find("{mock}"); at != std::string::npos; at = text.find("{mock}", at + base.size()))
      text.replace(at, 6, base);
    gateway = std::make_unique<gateway::Gateway>(gateway::gateway_config_from_toml(text, "gateway.toml"));
    gateway->start();
  }
  ~GatewayWorld() { gateway->stop(); }

  net::HttpReply call(const std::string& method, const std::string& target, const std::string& body = {},
                      std::vector<std::pair<std::string, std::string>> headers = {}) {
    net::HttpCall c;
    c.port = gateway->port();
    c.method = method;
    c.target = target;
    c.body = body;
    c.headers = std::move(headers);
    if (!body.empty()) c.headers.emplace_back("content-type", "application/json");
    return net::http_call(c);
  }
  net::HttpReply chat(const std::string& key, bool stream = false,
                      std::vector<std::pair<std::string, std::string>> headers = {}) {
    if (!key.empty()) headers.emplace_back("authorization", "Bearer " + key);
    const std::string body = fmt::format(
        R"({{"model":"mock-model","messages":[{{"role":"user","content":"classify this"}}],"stream":{}}})",
        stream ? "true" : "false");
    return call("POST", "/v1/chat/completions", body, std::move(headers));
  }
  boost::json::value stats() { return boost::json::parse(call("GET", "/stats").body); }
  std::size_t attempts_on(const std::string& route) {
    std::size_t n = 0;
    for (const auto& e : mock.engine().ledger("gw")) n += e.route == route;
    return n;
  }

  mock::MockServer mock;
  std::unique_ptr<gateway::Gateway> gateway;
};

// A gateway.toml with one tier "free" (key sk-free-1) and the given extra tables.
inline std::string gateway_toml(const std::string& body) {
  return "[keys]\n\"sk-free-1\" = \"free\"\n\n" + body;
}

}  // namespace llmchaos::test
