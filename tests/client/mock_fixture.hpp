#pragma once
// The real mock provider on 127.0.0.1:0 for the client's loopback tests: script a namespace, get a
// route's endpoint, read the ledger once the attempts have finished.
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "llmchaos/client/transport.hpp"
#include "llmchaos/mockprovider/server.hpp"

namespace llmchaos::test {

struct MockFixture {
  explicit MockFixture(mock::ServerOptions options = {}) : server(std::move(options)) { server.start(); }
  mock::MockServer server;
  std::string ns = "t";

  void install(const std::string& toml) {
    server.engine().install(ns, mock::parse_script_text(toml, "test.toml"));
  }
  client::Endpoint endpoint(const std::string& route, Dialect dialect) const {
    return {route, dialect, server.base_url() + "/" + ns + "/" + route};
  }
  // The ledger once it holds `n` entries, all finished (bounded wait: the server finishes an entry a
  // moment after the client saw the end).
  std::vector<LedgerEntry> ledger(std::size_t n) {
    std::vector<LedgerEntry> l;
    for (int i = 0; i < 500; ++i) {
      l = server.engine().ledger(ns);
      bool done = l.size() >= n;
      for (const auto& e : l) done = done && e.finished;
      if (done) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return l;
  }
  std::vector<SideEffect> side_effects() { return server.engine().side_effects(ns); }
};

// A route table in the mock's script format.
inline std::string route_toml(const std::string& route, Dialect d, const std::string& steps,
                              const std::string& text = "alpha beta gamma delta") {
  return "[route." + route + "]\ndialect = \"" + std::string(to_string(d)) + "\"\ntext = '" + text +
         "'\nscript = [" + steps + "]\n";
}

}  // namespace llmchaos::test
