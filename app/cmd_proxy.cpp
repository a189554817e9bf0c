// llmchaos proxy: the mock provider's routes, namespaces, script format, ledger and admin API in front
// of a real upstream (proxy/proxy.hpp). Prints "listening on http://HOST:PORT" first (flushed),
// then each route with its upstream; serves until SIGINT or SIGTERM. Nothing it prints or writes names
// a credential.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/mockprovider/server.hpp"
#include "llmchaos/proxy/proxy.hpp"
#include "number_checks.hpp"
#include "server_cli.hpp"
#include "stop_signals.hpp"

namespace llmchaos::app {
namespace {

struct ProxyArgs {
  mock::ServerOptions server;
  proxy::UpstreamOptions upstream;
  std::string script;
  std::string admin_token_file;
};

int proxy(ProxyArgs args) {
  StopSignals stop_signals;  // before any thread starts
  std::unique_ptr<mock::MockServer> server;
  proxy::ProxyScript script;
  try {
    resolve_server_options(args.server, args.admin_token_file);
    if (!args.script.empty()) script = proxy::load_proxy_script(args.script);
    for (const auto& [name, url] : script.upstreams) args.upstream.routes[name] = url;
    for (const auto& [name, route] : script.script.routes)
      if (!script.upstreams.count(name) && args.upstream.upstream.empty())
        throw std::invalid_argument(
            fmt::format("{}: route \"{}\" has no upstream: give it `upstream = \"URL\"` or pass --upstream",
                        args.script, name));
    args.server.forwarder = proxy::make_upstream_forwarder(args.upstream);
    server = std::make_unique<mock::MockServer>(args.server);
    server->engine().install("", script.script);
    server->start();
  } catch (...) {
    return report_start_error("proxy");
  }
  print_listening(args.server, server->port());
  warn_if_admin_open(args.server, "proxy");
  if (script.script.routes.empty())
    std::cout << "proxying no routes yet: install a script with PUT /__llmchaos/script (its routes use "
                 "--upstream)\n";
  if (!args.upstream.record_dir.empty())
    std::cout << "recording cassettes into " << args.upstream.record_dir << "\n";
  for (const auto& [name, route] : script.script.routes) {
    const auto it = args.upstream.routes.find(name);
    std::cout << fmt::format("  route {} ({}): {}/{}/... -> {}\n", name, to_string(route.dialect),
                             server->base_url(), name,
                             it != args.upstream.routes.end() ? it->second : args.upstream.upstream);
  }
  std::cout.flush();
  const char* stopped_by = stop_signals.wait();
  server->stop();
  std::cerr << "llmchaos proxy: stopped (" << stopped_by << ")\n";
  return 0;
}

}  // namespace

void add_proxy(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ProxyArgs>();
  auto* sub = app.add_subcommand("proxy",
                                 "forward each route to a real upstream and apply its fault script to the "
                                 "real traffic (streams frame by frame)");
  sub->add_option(
      "--upstream", args->upstream.upstream,
      "base URL of the routes without their own `upstream` key (http:// or https://); the path after "
      "/ROUTE is appended");
  sub->add_option("--script", args->script,
                  "fault script (TOML with [route.NAME] tables, each with an optional upstream = \"URL\")");
  sub->add_option("--record", args->upstream.record_dir,
                  "write each exchange whose 2xx answer was read whole as a cassette DIR/KEY.cassette.json "
                  "(proxy/CASSETTES.md; credentials left out)");
  sub->add_option("--upstream-ca", args->upstream.ca_file,
                  "PEM file of CA certificates trusted for https:// upstreams besides the system store")
      ->check(CLI::ExistingFile);
  add_server_options(*sub, args->server, args->admin_token_file);
  sub->add_option("--connect-timeout-ms", args->upstream.connect_timeout_ms, "connecting to the upstream")
      ->check(finite_between(1, 86'400'000))
      ->capture_default_str();
  sub->add_option("--read-timeout-ms", args->upstream.read_timeout_ms,
                  "silence from the upstream before the attempt is cut")
      ->check(finite_between(1, 86'400'000))
      ->capture_default_str();
  sub->callback([args, &exit_code] { exit_code = proxy(*args); });
}

}  // namespace llmchaos::app
