// llmchaos serve: the mock provider as a process. Prints "listening on http://HOST:PORT" first (flushed),
// serves until SIGINT or SIGTERM, then stops within a second (held connections included).
#include <iostream>
#include <memory>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "commands.hpp"
#include "stop_signals.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/mockprovider/server.hpp"

namespace llmchaos::app {
namespace {

struct ServeArgs {
  mock::ServerOptions server;
  std::string script;
};

// A long-running server must give memory back after a ledger reset. glibc raises its trim threshold
// each time a large block (a big ledger response) is freed, after which a thread arena's free top is
// never returned; fixed thresholds keep trimming on.
void keep_heap_trimming() {
#if defined(__GLIBC__)
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  mallopt(M_TRIM_THRESHOLD, 1024 * 1024);
#endif
}

int serve(const ServeArgs& args) {
  keep_heap_trimming();
  StopSignals stop_signals;  // before any thread starts

  std::unique_ptr<mock::MockServer> server;
  try {
    mock::Script script;
    if (!args.script.empty()) script = mock::load_script_file(args.script);
    server = std::make_unique<mock::MockServer>(args.server);
    server->engine().install("", std::move(script));
    server->start();
  } catch (const SpecError& e) {
    std::cerr << "llmchaos serve: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "llmchaos serve: " << e.what() << "\n";
    return 2;
  }
  const auto& bind = args.server.bind;
  const auto host = bind.find(':') != std::string::npos ? "[" + bind + "]" : bind;
  std::cout << "listening on http://" << host << ":" << server->port() << std::endl;  // endl: flushed at once

  const char* stopped_by = stop_signals.wait();
  server->stop();
  std::cerr << "llmchaos serve: stopped (" << stopped_by << ")\n";
  return 0;
}

}  // namespace

void add_serve(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ServeArgs>();
  auto* sub = app.add_subcommand("serve", "run the mock provider (OpenAI, Anthropic, Gemini dialects) with a fault script");
  sub->add_option("--bind", args->server.bind, "address to listen on (a non-loopback address needs --admin-token)")
      ->capture_default_str();
  sub->add_option("--port", args->server.port, "port (0 = ephemeral; the bound port is printed)")->capture_default_str();
  sub->add_option("--script", args->script, "fault script (TOML with [route.NAME] tables)")->check(CLI::ExistingFile);
  sub->add_option("--admin-token", args->server.admin_token,
                  "token the admin API (/__llmchaos/...) requires as 'Authorization: Bearer TOKEN'");
  sub->add_option("--time-scale", args->server.time_scale,
                  "multiply every scripted delay, hold, time window and retry-after by this factor")
      ->check(CLI::PositiveNumber)
      ->capture_default_str();
  sub->add_option("--seed", args->server.seed,
                  "seed of the scripted draws (slow p50/p95 latencies); each namespace draws from (seed, its name)")
      ->capture_default_str();
  sub->add_option("--threads", args->server.threads, "I/O threads")->check(CLI::Range(1, 64))->capture_default_str();
  sub->add_option("--body-limit", args->server.body_limit, "largest request body in bytes (larger: 413)")
      ->capture_default_str();
  sub->add_option("--header-limit", args->server.header_limit, "largest request head in bytes (larger: 431)")
      ->capture_default_str();
  sub->add_option("--max-header-count", args->server.max_header_count, "most request header fields (more: 431)")
      ->capture_default_str();
  sub->add_option("--max-held-connections", args->server.max_held_connections,
                  "connections held at once by post_commit_timeout / no_response (more: the dialect's 503)")
      ->capture_default_str();
  sub->add_option("--max-connections", args->server.max_connections, "open connections before new ones get 503")
      ->capture_default_str();
  sub->add_option("--idle-timeout-ms", args->server.idle_timeout_ms, "close connections idle or slow for this long")
      ->capture_default_str();
  sub->add_option("--ledger-limit", args->server.ledger_limit,
                  "ledger entries kept per namespace, oldest dropped first (0 = unlimited)")
      ->capture_default_str();
  sub->callback([args, &exit_code] { exit_code = serve(*args); });
}

}  // namespace llmchaos::app
