#pragma once
// The mock provider's HTTP server (Boost.Beast, C++20 coroutines). No Beast types here.
#include <cstdint>
#include <memory>
#include <string>

#include "llmchaos/mockprovider/admin_extension.hpp"
#include "llmchaos/mockprovider/engine.hpp"

namespace llmchaos::mock {

class Forwarder;    // forward_hook.hpp
class Http2Server;  // http2_hook.hpp

struct ServerOptions {
  std::string bind = "127.0.0.1";
  std::uint16_t port = 0;       // 0 = ephemeral
  std::string admin_token;      // required for admin requests when set (and for non-loopback binds)
  bool insecure_admin = false;  // a non-loopback bind without a token is allowed (--insecure-admin)
  // The base URL callers reach this server at (a port mapping or a proxy between them, --public-url);
  // "" = built from the bind address (an unspecified one, 0.0.0.0 or ::, as loopback).
  std::string public_url;
  double time_scale = 1.0;  // scales every scripted delay, retry-after and hold
  std::uint64_t seed = 0;  // the draws (slow latencies): namespace NS draws from (seed, NS) (Engine::install)
  std::size_t body_limit = 8 * 1024 * 1024;
  std::size_t header_limit = 16 * 1024;
  std::size_t max_header_count = 100;      // more header fields: 431
  std::size_t max_held_connections = 256;  // holds (post_commit_timeout, no_response) beyond this: 503
  std::size_t max_connections = 1024;
  double idle_timeout_ms = 30000;  // slow or idle connections are closed
  int threads = 1;
  std::size_t ledger_limit = 0;          // ledger entries kept per namespace (oldest dropped); 0 = unlimited
  std::shared_ptr<Forwarder> forwarder;  // `llmchaos proxy`, `serve --cassettes` (make_upstream_forwarder,
                                         // make_cassette_forwarder); null: a mock provider
  bool require_auth =
      false;  // routes without `require_auth` in their script check the credential (--require-auth)
  // HTTP/2 with prior knowledge (h2c): a connection opening with the client preface is served by it
  // (http2/: llmchaos::http2's make_http2_server); null, or with a forwarder: HTTP/1.1 only.
  std::shared_ptr<Http2Server> http2;
};

class MockServer {
 public:
  explicit MockServer(ServerOptions options);  // uses its own steady clock
  ~MockServer();                               // stops
  MockServer(const MockServer&) = delete;
  MockServer& operator=(const MockServer&) = delete;

  void start();  // binds and runs on background threads; throws with bind:port on failure
  void stop();   // cancels holds and closes connections; returns within a second
  std::uint16_t port() const;
  std::string base_url() const;  // "http://127.0.0.1:PORT", or ServerOptions::public_url
  Engine& engine();
  // Adds the app's admin endpoints (admin_extension.hpp); before start(). Their requests run on a small
  // pool of their own, off the I/O threads.
  void set_admin_extension(std::shared_ptr<AdminExtension> extension);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmchaos::mock
