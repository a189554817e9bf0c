#pragma once
// `llmchaos proxy`: the mock provider's server, router, engine and fault plans in front of a real
// upstream. Every attempt is planned by the engine as for `serve`; a plan that lets the request reach the
// provider (ok, the stream faults, post_commit_timeout) is forwarded, and its stream edit
// (stream_edit.hpp) is applied to the upstream's real frames. No Beast types here.
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "llmchaos/mockprovider/plan.hpp"
#include "llmchaos/mockprovider/script.hpp"

namespace llmchaos::mock {
class Forwarder;  // mockprovider/forward_hook.hpp: what the server's session hands a forwarded attempt to
}  // namespace llmchaos::mock

namespace llmchaos::proxy {

struct UpstreamOptions {
  std::string upstream;                       // base URL of every route without its own (`--upstream`)
  std::map<std::string, std::string> routes;  // route name -> base URL (the route's `upstream` key)
  std::string ca_file;  // PEM certificates trusted besides the system store (`--upstream-ca`)
  double connect_timeout_ms = 10000;
  double read_timeout_ms = 300000;  // silence from the upstream before the attempt is cut
  std::string record_dir;  // `--record DIR`: each whole 2xx answer written as a cassette (cassette.hpp)
};

// Throws std::invalid_argument naming a URL that is not http:// or https://, std::runtime_error naming a
// CA file that cannot be read.
std::shared_ptr<mock::Forwarder> make_upstream_forwarder(UpstreamOptions options);

// Whether a plan lets the request reach the provider: the healthy answer's plans (ok, stream faults,
// slow and latency steps) and a committed hold (post_commit_timeout). Error answers, resets and
// uncommitted holds are the proxy's own, as in `serve`: the upstream is not called.
bool forwards(const mock::Plan& plan);

// Credentials: request headers that are passed on to the upstream but never written anywhere, query
// parameters that carry a key (Gemini's `key=`; any case), and a request target with those masked.
bool secret_header(std::string_view lower_case_name);
bool secret_query_param(std::string_view name);
std::string redact_target(std::string_view target);

// A proxy script: the `[route.NAME]` tables of a fault script, each with an optional `upstream = "URL"`.
struct ProxyScript {
  mock::Script script;
  std::map<std::string, std::string> upstreams;
};
ProxyScript load_proxy_script(const std::string& path);
ProxyScript parse_proxy_script(std::string_view text, const std::string& source_name);

}  // namespace llmchaos::proxy
