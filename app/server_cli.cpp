#include "server_cli.hpp"

#include <cstdlib>
#include <exception>
#include <fstream>
#include <iostream>
#include <string>

#include "llmchaos/core/spec_error.hpp"
#include "number_checks.hpp"

namespace llmchaos::app {

void add_server_options(CLI::App& sub, mock::ServerOptions& server, std::string& token_file) {
  sub.add_option("--host,--bind", server.bind,
                 "address to listen on; a non-loopback one (0.0.0.0 in a container) needs an admin token")
      ->envname("LLMCHAOS_HOST")
      ->capture_default_str();
  sub.add_option("--port", server.port, "port (0 = ephemeral; the bound port is printed)")
      ->envname("LLMCHAOS_PORT")
      ->capture_default_str();
  auto* token = sub.add_option(
      "--admin-token", server.admin_token,
      "token the admin and session APIs (/__llmchaos/... but ready and health, and /metrics) require as "
      "'Authorization: Bearer TOKEN' (visible in the process list: prefer --admin-token-file or "
      "LLMCHAOS_ADMIN_TOKEN)");
  sub.add_option("--admin-token-file", token_file, "read the admin token from the first line of FILE")
      ->check(CLI::ExistingFile)
      ->excludes(token);
  sub.add_flag("--insecure-admin", server.insecure_admin,
               "allow a non-loopback --host without an admin token: anyone who reaches it may install "
               "scripts, read the ledger and open sessions");
  sub.add_option("--public-url", server.public_url,
                 "the base URL callers reach this server at, when a port mapping or a proxy sits between "
                 "them (the banner's and the session API's base URLs; default: the Host each caller used)");
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

namespace {
std::string first_line_of(const std::string& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line))
    throw std::invalid_argument("--admin-token-file " + file + ": cannot read a line");
  const auto first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos)
    throw std::invalid_argument("--admin-token-file " + file + ": its first line is empty");
  return line.substr(first, line.find_last_not_of(" \t\r") + 1 - first);
}
}  // namespace

void resolve_server_options(mock::ServerOptions& server, const std::string& token_file) {
  if (server.admin_token.empty() && !token_file.empty()) server.admin_token = first_line_of(token_file);
  if (server.admin_token.empty())
    if (const char* env = std::getenv("LLMCHAOS_ADMIN_TOKEN"); env && *env) server.admin_token = env;
  auto& url = server.public_url;
  if (url.empty()) return;
  while (url.size() > 1 && url.back() == '/') url.pop_back();
  const bool scheme = url.rfind("http://", 0) == 0 || url.rfind("https://", 0) == 0;
  if (!scheme || url.find_first_of(" \t\r\n?#") != std::string::npos || url.find("://") + 3 >= url.size())
    throw std::invalid_argument("--public-url " + url +
                                ": expected http://HOST[:PORT][/PATH] or https://...");
}

void warn_if_admin_open(const mock::ServerOptions& server, std::string_view command) {
  if (server.insecure_admin && server.admin_token.empty())
    std::cerr << "llmchaos " << command << ": WARNING: --insecure-admin: the admin and session APIs are open "
              << "to anyone who reaches " << server.bind << " (no token)\n";
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
