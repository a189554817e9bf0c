#include "server_cli.hpp"

#include <exception>
#include <iostream>
#include <string>

#include "llmchaos/core/spec_error.hpp"
#include "number_checks.hpp"

namespace llmchaos::app {

void add_server_options(CLI::App& sub, mock::ServerOptions& server) {
  sub.add_option("--bind", server.bind, "address to listen on (a non-loopback address needs --admin-token)")
      ->capture_default_str();
  sub.add_option("--port", server.port, "port (0 = ephemeral; the bound port is printed)")
      ->capture_default_str();
  sub.add_option("--admin-token", server.admin_token,
                 "token the admin API (/__llmchaos/...) requires as 'Authorization: Bearer TOKEN'");
  sub.add_option("--time-scale", server.time_scale,
                 "multiply every scripted delay, hold, time window and retry-after by this factor")
      ->check(finite_between(0, 1000, /*min_open=*/true))
      ->capture_default_str();
  sub.add_option(
         "--seed", server.seed,
         "seed of the scripted draws (slow p50/p95 latencies); each namespace draws from (seed, its name)")
      ->capture_default_str();
  sub.add_option("--threads", server.threads, "I/O threads")->check(CLI::Range(1, 64))->capture_default_str();
  sub.add_option("--body-limit", server.body_limit, "largest request body in bytes (larger: 413)")
      ->capture_default_str();
  sub.add_option("--header-limit", server.header_limit, "largest request head in bytes (larger: 431)")
      ->capture_default_str();
  sub.add_option("--max-header-count", server.max_header_count, "most request header fields (more: 431)")
      ->capture_default_str();
  sub.add_option("--max-held-connections", server.max_held_connections,
                 "connections held at once by post_commit_timeout / no_response (more: the dialect's 503)")
      ->capture_default_str();
  sub.add_option("--max-connections", server.max_connections, "open connections before new ones get 503")
      ->check(CLI::Range(1, 1'000'000))
      ->capture_default_str();
  sub.add_option("--idle-timeout-ms", server.idle_timeout_ms, "close connections idle or slow for this long")
      ->check(finite_between(1, 86'400'000))
      ->capture_default_str();
  sub.add_flag(
      "--require-auth", server.require_auth,
      "answer a request without the dialect's API key header (Gemini: or key=) with the provider's own "
      "missing-key error, as every route with require_auth = true does");
  sub.add_option("--ledger-limit", server.ledger_limit,
                 "ledger entries kept per namespace, oldest dropped first (0 = unlimited)")
      ->capture_default_str();
}

void print_listening(const mock::ServerOptions& server, std::uint16_t port) {
  const auto& bind = server.bind;
  const auto host = bind.find(':') != std::string::npos ? "[" + bind + "]" : bind;
  std::cout << "listening on http://" << host << ":" << port << std::endl;  // endl: flushed at once
}

int report_start_error(std::string_view command) {
  try {
    throw;
  } catch (const SpecErrors& e) {
    for (const auto& one : e.all()) std::cerr << "llmchaos " << command << ": " << one.what() << "\n";
  } catch (const std::exception& e) {  // SpecError: "file:line:col: ..."
    std::cerr << "llmchaos " << command << ": " << e.what() << "\n";
  } catch (...) {
    std::cerr << "llmchaos " << command << ": an unknown error\n";
  }
  return 2;
}

}  // namespace llmchaos::app
