// llmchaos serve: the mock provider as a process. Prints "listening on http://HOST:PORT" first (flushed),
// then one line saying what it serves and the SDK base URL of each route; serves until SIGINT or
// SIGTERM, then stops within a second (held connections included). --script takes a fault script or a
// case file (its [route.*] tables, as `llmchaos run` plays them; the rest of the case is not served).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "commands.hpp"
#include "number_checks.hpp"
#include "server_cli.hpp"
#include "stop_signals.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/core/toml_reader.hpp"
#include "llmchaos/harness/case.hpp"
#include "llmchaos/mockprovider/dialect.hpp"
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

// The script to serve and one line saying what it is. A case file gives its routes as `run` plays them
// (its policy file's routes included); a broken case is refused with every error, as `run` would.
struct Served {
  mock::Script script;
  std::string what;
};

Served load_served(const std::string& path) {
  if (path.empty()) return {{}, "serving no routes yet: install a script with PUT /__llmchaos/script"};
  if (!harness::is_case_document(parse_toml_file(path)))
    return {mock::load_script_file(path), fmt::format("serving the fault script {}", path)};
  auto loaded = harness::load_case_file(path);
  throw_errors(std::move(loaded.errors));
  return {std::move(loaded.value->script),
          fmt::format("serving the routes of case \"{}\" ({}); its other tables and the client keys of its "
                      "routes are not served", loaded.value->name, path)};
}

int serve(const ServeArgs& args) {
  keep_heap_trimming();
  StopSignals stop_signals;  // before any thread starts

  std::unique_ptr<mock::MockServer> server;
  Served served;
  try {
    served = load_served(args.script);
    server = std::make_unique<mock::MockServer>(args.server);
    server->engine().install("", served.script);
    server->start();
  } catch (...) {
    return report_start_error("serve");
  }
  print_listening(args.server, server->port());
  const auto base = server->base_url();
  std::cout << served.what << "\n";
  for (const auto& [name, route] : served.script.routes)
    std::cout << fmt::format("  route {} ({}): SDK base URL {}\n", name, to_string(route.dialect),
                             mock::sdk_base_url(base + "/" + name, route.dialect));
  std::cout.flush();

  const char* stopped_by = stop_signals.wait();
  server->stop();
  std::cerr << "llmchaos serve: stopped (" << stopped_by << ")\n";
  return 0;
}

}  // namespace

void add_serve(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ServeArgs>();
  auto* sub = app.add_subcommand("serve", "run the mock provider (OpenAI Chat Completions and Responses, Anthropic, Gemini dialects) with a fault script");
  add_server_options(*sub, args->server);
  sub->add_option("--script", args->script,
                  "fault script (TOML with [route.NAME] tables), or a case file: its [route.*] tables are served");
  sub->callback([args, &exit_code] { exit_code = serve(*args); });
}

}  // namespace llmchaos::app
