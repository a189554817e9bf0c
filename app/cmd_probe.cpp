// llmchaos probe URL: one GET, exit 0 on a 2xx answer, 1 on any other answer or none. The image's
// HEALTHCHECK and the Helm chart's test hook run it: an image from scratch has no shell and no curl.
#include <fmt/format.h>

#include <iostream>
#include <memory>

#include "commands.hpp"
#include "llmchaos/net/http_call.hpp"
#include "number_checks.hpp"

namespace llmchaos::app {
namespace {

struct ProbeArgs {
  std::string url;
  double timeout_s = 2;
  bool quiet = false;
};

int probe(const ProbeArgs& args) {
  net::Url url;
  try {
    url = net::parse_url(args.url);
  } catch (const std::exception& e) {
    std::cerr << "llmchaos probe: " << e.what() << "\n";
    return 2;
  }
  try {
    net::HttpCall call;
    call.host = url.host;
    call.port = url.port;
    call.target = url.path.empty() ? "/" : url.path;
    call.timeout_ms = args.timeout_s * 1000;
    const auto reply = net::http_call(call);
    const bool ok = reply.status >= 200 && reply.status < 300;
    if (!args.quiet) (ok ? std::cout : std::cerr) << fmt::format("{}: {}\n", args.url, reply.status);
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    if (!args.quiet) std::cerr << "llmchaos probe: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace

void add_probe(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ProbeArgs>();
  auto* sub = app.add_subcommand(
      "probe", "GET a URL once: exit 0 on a 2xx answer, 1 otherwise (a container's health check)");
  sub->add_option("url", args->url, "http://HOST:PORT/PATH, e.g. http://127.0.0.1:8080/__llmchaos/ready")
      ->required();
  sub->add_option("--timeout", args->timeout_s, "seconds to wait for the whole answer")
      ->check(finite_between(0, 3600, /*min_open=*/true))
      ->capture_default_str();
  sub->add_flag("--quiet,-q", args->quiet, "print nothing");
  sub->callback([args, &exit_code] { exit_code = probe(*args); });
}

}  // namespace llmchaos::app
