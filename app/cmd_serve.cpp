// llmchaos serve: the mock provider as a process. Prints "listening on http://HOST:PORT" first (flushed),
// then one line saying what it serves and the SDK base URL of each route; serves until SIGINT or
// SIGTERM, then stops within a second (held connections included). --script takes a fault script or a
// case file (its [route.*] tables, as `llmchaos run` plays them; the rest of the case is not served).
// --cassettes DIR: the healthy answers are recorded ones (proxy/CASSETTES.md), faults applied to
// them as `llmchaos proxy` applies them to real traffic; a miss is a 501 naming the request's key, or with
// --on-miss upstream the request goes to --upstream and its answer is recorded into DIR.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <iostream>
#include <memory>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include "commands.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/core/toml_reader.hpp"
#include "llmchaos/harness/case.hpp"
#if defined(LLMCHAOS_HAVE_HTTP2)
#include "llmchaos/http2/http2.hpp"
#endif
#include "llmchaos/mockprovider/dialect.hpp"
#include "llmchaos/mockprovider/server.hpp"
#include "llmchaos/proxy/cassette.hpp"
#include "llmchaos/proxy/proxy.hpp"
#include "llmchaos/sessions/session_api.hpp"
#include "number_checks.hpp"
#include "server_cli.hpp"
#include "stop_signals.hpp"

namespace llmchaos::app {
namespace {

struct ServeArgs {
  mock::ServerOptions server;
  std::string script;
  std::string cassettes;                 // --cassettes DIR
  std::string on_miss = "error";         // error | upstream
  proxy::UpstreamOptions upstream;       // --on-miss upstream
  double session_ttl_s = 600;            // --session-ttl
  std::size_t max_sessions = 1000;       // --max-sessions
  std::string admin_token_file;          // --admin-token-file
  std::string cases_root, reports_root;  // --cases-root, --reports-root ("": the working directory)
};

// A root folder as an absolute path ("": the working directory); one that does not exist is refused.
std::string root_folder(const std::string& given, std::string_view flag) {
  std::error_code ec;
  const auto path = std::filesystem::absolute(given.empty() ? "." : given, ec).lexically_normal();
  if (ec || !std::filesystem::is_directory(path, ec))
    throw std::invalid_argument(fmt::format("{} {}: not a folder", flag, given));
  return path.string();
}

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

// With cassettes a fault script is read as the proxy reads it: a step's N counts recorded content events,
// and a route may name its upstream for --on-miss upstream.
Served load_served(const std::string& path, ServeArgs& args) {
  if (path.empty()) return {{}, "serving no routes yet: install a script with PUT /__llmchaos/script"};
  if (!harness::is_case_document(parse_toml_file(path))) {
    if (args.cassettes.empty())
      return {mock::load_script_file(path), fmt::format("serving the fault script {}", path)};
    auto proxy_script = proxy::load_proxy_script(path);
    for (const auto& [name, url] : proxy_script.upstreams) args.upstream.routes[name] = url;
    return {std::move(proxy_script.script), fmt::format("serving the fault script {}", path)};
  }
  auto loaded = harness::load_case_file(path);
  throw_errors(std::move(loaded.errors));
  return {std::move(loaded.value->script),
          fmt::format("serving the routes of case \"{}\" ({}); its other tables and the client keys of its "
                      "routes are not served",
                      loaded.value->name, path)};
}

// --cassettes: the cassette forwarder (with, for --on-miss upstream, an upstream forwarder recording into
// the same folder).
void use_cassettes(ServeArgs& args, const mock::Script& script) {
  if (args.cassettes.empty()) return;
  std::shared_ptr<mock::Forwarder> on_miss;
  if (args.on_miss == "upstream") {
    for (const auto& [name, route] : script.routes)
      if (!args.upstream.routes.count(name) && args.upstream.upstream.empty())
        throw std::invalid_argument(
            fmt::format("--on-miss upstream: route \"{}\" has no upstream: give it `upstream = \"URL\"` "
                        "in the script or pass --upstream",
                        name));
    if (script.routes.empty() && args.upstream.upstream.empty())
      throw std::invalid_argument("--on-miss upstream needs --upstream URL");
    args.upstream.record_dir = args.cassettes;
    on_miss = proxy::make_upstream_forwarder(args.upstream);
  } else {
    std::error_code ec;
    if (!std::filesystem::is_directory(args.cassettes, ec))
      throw std::invalid_argument(fmt::format(
          "--cassettes {}: not a folder (with --on-miss error every request would miss)", args.cassettes));
  }
  args.server.forwarder =
      proxy::make_cassette_forwarder({args.cassettes, args.server.time_scale}, std::move(on_miss));
}

// The session API (harness/sessions/README.md) on /__llmchaos/sessions: cases played from a team's own
// tests, at the server's --time-scale and --seed.
std::shared_ptr<sessions::SessionApi> session_api(mock::MockServer& server, Clock& clock,
                                                  const ServeArgs& args) {
  sessions::SessionOptions options;
  options.time_scale = args.server.time_scale;
  options.seed = args.server.seed;
  options.ttl_ms = args.session_ttl_s * 1000;
  options.max_sessions = args.max_sessions;
  options.public_url = args.server.public_url;
  options.cases_root = root_folder(args.cases_root, "--cases-root");
  options.reports_root = root_folder(args.reports_root, "--reports-root");
  options.id_salt =
      static_cast<std::uint64_t>(clock.now_ms() * 1000) ^ static_cast<std::uint64_t>(::getpid());
  return std::make_shared<sessions::SessionApi>(
      server.engine(), clock, [&server] { return server.base_url(); }, options);
}

int serve(ServeArgs args) {
  keep_heap_trimming();
  StopSignals stop_signals;  // before any thread starts

  SteadyClock session_clock;  // before the server: the session API it holds reads it
  std::unique_ptr<mock::MockServer> server;
  Served served;
  try {
    resolve_server_options(args.server, args.admin_token_file);
    served = load_served(args.script, args);
    use_cassettes(args, served.script);
#if defined(LLMCHAOS_HAVE_HTTP2)
    // HTTP/2 with prior knowledge beside HTTP/1.1 (http2/README.md); not with cassettes (a forwarder).
    if (!args.server.forwarder) args.server.http2 = http2::make_http2_server();
#endif
    server = std::make_unique<mock::MockServer>(args.server);
    server->engine().install("", served.script);
    server->set_admin_extension(session_api(*server, session_clock, args));
    server->start();
  } catch (...) {
    return report_start_error("serve");
  }
  print_listening(args.server, server->port());
  warn_if_admin_open(args.server, "serve");
  const auto base = server->base_url();
  std::cout << served.what << "\n";
  if (!args.cassettes.empty())
    std::cout << fmt::format("healthy answers from the cassettes in {} (a miss: {})\n", args.cassettes,
                             args.on_miss == "upstream" ? "forwarded and recorded" : "501 naming its key");
  for (const auto& [name, route] : served.script.routes)
    std::cout << fmt::format("  route {} ({}): SDK base URL {}\n", name, to_string(route.dialect),
                             mock::sdk_base_url(base + "/" + name, route.dialect));
  std::cout << fmt::format(
      "session API: POST {}/__llmchaos/sessions with a case (harness/sessions/README.md)\n", base);
  std::cout.flush();

  const char* stopped_by = stop_signals.wait();
  server->stop();
  std::cerr << "llmchaos serve: stopped (" << stopped_by << ")\n";
  return 0;
}

}  // namespace

void add_serve(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ServeArgs>();
  auto* sub = app.add_subcommand("serve",
                                 "run the mock provider (OpenAI Chat Completions and Responses, Anthropic, "
                                 "Gemini dialects) with a fault script");
  add_server_options(*sub, args->server, args->admin_token_file);
  sub->add_option(
      "--script", args->script,
      "fault script (TOML with [route.NAME] tables), or a case file: its [route.*] tables are served");
  auto* cassettes =
      sub->add_option("--cassettes", args->cassettes,
                      "serve recorded answers (DIR/KEY.cassette.json, proxy/CASSETTES.md) as the "
                      "routes' healthy answers, with their recorded timing (scaled by --time-scale)");
  sub->add_option(
         "--on-miss", args->on_miss,
         "a request without a cassette: error (501 naming its key) or upstream (forward to --upstream and "
         "record the answer)")
      ->check(CLI::IsMember({"error", "upstream"}))
      ->needs(cassettes)
      ->capture_default_str();
  sub->add_option("--upstream", args->upstream.upstream,
                  "with --on-miss upstream: base URL of the routes without their own `upstream` key")
      ->needs(cassettes);
  sub->add_option("--upstream-ca", args->upstream.ca_file,
                  "PEM file of CA certificates trusted for https:// upstreams besides the system store")
      ->check(CLI::ExistingFile)
      ->needs(cassettes);
  sub->add_option(
         "--session-ttl", args->session_ttl_s,
         "seconds a session of the session API (POST /__llmchaos/sessions) lives without a call before it "
         "is ended (its namespace removed)")
      ->check(finite_between(0, 604'800, /*min_open=*/true))
      ->capture_default_str();
  sub->add_option("--max-sessions", args->max_sessions,
                  "sessions open at once; one more create is answered 429 with a Retry-After")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1'000'000}))
      ->capture_default_str();
  sub->add_option(
         "--cases-root", args->cases_root,
         "the folder a session's case_path (and its case's policy file) must be inside (403 otherwise); "
         "a relative case_path is read from it (default: the working directory)")
      ->envname("LLMCHAOS_CASES_ROOT");
  sub->add_option(
         "--reports-root", args->reports_root,
         "the folder POST /__llmchaos/sessions/reports may write into (403 otherwise); a relative dir "
         "is below it (default: the working directory)")
      ->envname("LLMCHAOS_REPORTS_ROOT");
  sub->callback([args, &exit_code] { exit_code = serve(*args); });
}

}  // namespace llmchaos::app
