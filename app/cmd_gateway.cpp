// llmchaos gateway: the OpenAI-compatible gateway over the client stack (gateway/README.md). Prints
// "listening on http://HOST:PORT" first (flushed), serves until SIGINT or SIGTERM, then stops within a
// second. A non-loopback bind needs --allow-non-loopback (the gateway holds upstream credentials).
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>

#include "commands.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/gateway/gateway.hpp"
#include "stop_signals.hpp"

namespace llmchaos::app {
namespace {

struct GatewayArgs {
  std::string config;
  std::optional<std::string> bind;
  std::optional<std::uint16_t> port;
  bool allow_non_loopback = false;
};

int run_gateway(const GatewayArgs& args) {
  StopSignals stop_signals;  // before any thread starts

  std::unique_ptr<gateway::Gateway> gw;
  try {
    auto config = gateway::load_gateway_config(args.config);
    if (args.bind) config.bind = *args.bind;
    if (args.port) config.port = *args.port;
    if (!gateway::is_loopback_address(config.bind) && !args.allow_non_loopback) {
      std::cerr << "llmchaos gateway: refusing to bind " << config.bind
                << " (not loopback); pass --allow-non-loopback to expose it\n";
      return 2;
    }
    gw = std::make_unique<gateway::Gateway>(std::move(config));
    gw->start();
  } catch (const std::exception& e) {  // SpecError: "file:line:col: ..."
    std::cerr << "llmchaos gateway: " << e.what() << "\n";
    return 2;
  }
  std::cout << "listening on " << gw->base_url() << std::endl;  // endl: flushed at once

  const char* stopped_by = stop_signals.wait();
  const bool all_ended = gw->stop();
  std::cerr << "llmchaos gateway: stopped (" << stopped_by << ")\n";
  if (!all_ended) {
    // A request thread is still inside an upstream call: do not wait for its timeout.
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(0);
  }
  return 0;
}

}  // namespace

void add_gateway(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<GatewayArgs>();
  auto* sub = app.add_subcommand(
      "gateway",
      "run an OpenAI-compatible gateway over the client stack (keys, tiers, breakers, balancing, fallback)");
  sub->add_option("--config", args->config, "gateway.toml (see examples/gateway.toml)")
      ->required()
      ->check(CLI::ExistingFile);
  sub->add_option("--host,--bind", args->bind,
                  "address to listen on (overrides [gateway] bind; default 127.0.0.1; another one needs "
                  "--allow-non-loopback)");
  sub->add_option("--port", args->port,
                  "port (overrides [gateway] port; 0 = ephemeral, the bound port is printed)");
  sub->add_flag("--allow-non-loopback", args->allow_non_loopback, "allow a bind address other than loopback");
  sub->callback([args, &exit_code] { exit_code = run_gateway(*args); });
}

}  // namespace llmchaos::app
