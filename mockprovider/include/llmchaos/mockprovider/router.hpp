#pragma once
// Request -> plan, without a socket: the admin API, /metrics, the side-effect endpoint and the
// provider routes (/{route}/... and /{ns}/{route}/...). The Beast session reads a request, asks the
// router, executes the plan and reports how it ended. Fuzzers and tests call it directly.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmchaos/mockprovider/admin_extension.hpp"
#include "llmchaos/mockprovider/engine.hpp"
#include "llmchaos/mockprovider/plan.hpp"

namespace llmchaos::mock {

struct RawRequest {
  std::string method = "GET";
  std::string target = "/";                                  // path and query
  std::vector<std::pair<std::string, std::string>> headers;  // lower-cased names
  std::string body;
  WireProtocol protocol = WireProtocol::none;       // what the request came over (the ledger's `protocol`)
  std::string header(std::string_view name) const;  // "" when absent
};

struct Routed {
  Plan plan;
  std::optional<std::uint64_t> seq;  // set when the attempt is in the ledger (finish it later)
  // An attempt's namespace, route and path below it (query kept), empty unless
  // RouterOptions::report_targets: views of the routed request's target, valid while it is unchanged.
  std::string_view ns{}, route{}, path{};
};

struct RouterOptions {
  std::string admin_token;         // when set, admin requests need it
  bool report_targets = true;      // Routed's ns, route and path are filled in (a forwarder needs them)
  bool keep_every_header = false;  // the requests are forwarded: readers keep every header (headers_kept)
};

// Which request headers a request reader keeps, lower-cased: the router's decision (Router::headers_kept),
// handed to the reader once, so nothing on a request's way asks the router back. Every one when the
// requests are forwarded, else those the router reads (reads_header; Host of an admin target, reads_host).
struct HeadersKept {
  bool every = false;
  bool keeps(std::string_view lower_name, std::string_view target) const;
};

// Where an admin path (below /__llmchaos/) points: an endpoint of every namespace (all) or of one, or
// the namespace itself (DELETE); none: no admin endpoint.
struct AdminPath {
  enum class Kind { none, endpoint, namespace_itself };
  Kind kind = Kind::none;
  std::string ns;         // "" when all
  std::string_view what;  // the endpoint's name, a view into the path
  bool all = false;       // the top-level ledger, side_effects and reset cover every namespace
};
AdminPath parse_admin_path(const std::vector<std::string_view>& segments);

class Router {
 public:
  Router(Engine& engine, RouterOptions options);
  // The plan of `req`, which the engine reads in place (RequestView): the caller keeps its buffers.
  Routed handle(const RawRequest& req);
  // Whether the router (or the engine behind it) reads this request header (lower-cased name): a
  // server may pass only those on.
  static bool reads_header(std::string_view name);
  // Whether it reads the Host header of a request for `target`: only an admin request's (the session
  // API builds the base URLs it hands out from it), so provider traffic never pays for it.
  static bool reads_host(std::string_view target);
  HeadersKept headers_kept() const { return {options_.keep_every_header}; }
  // The app's admin endpoints (nullptr: none). Set before the server starts.
  void set_extension(std::shared_ptr<AdminExtension> extension);
  // Whether `target` is an admin path of the extension: the server routes it off its I/O threads.
  bool extended(std::string_view target) const;
  // Answers for requests the session could not read whole: 413 (body over the limit) in the dialect of
  // the route the target names (generic JSON when none), 431 (header too large), 400 (bad HTTP), 503
  // (over a limit: the route's dialect's overloaded error, generic JSON when none).
  Plan reject(std::string_view target, int status) const;

 private:
  Routed admin(const RawRequest& req, std::string_view path);
  bool admin_token_accepted(const RawRequest& req) const;  // true when no token is set
  // The endpoint's answer; nullopt when `where` names it with a method it does not serve.
  std::optional<Routed> run_admin_endpoint(const RawRequest& req, const AdminPath& where);
  Routed install_script(const std::string& ns, const std::string& text);
  Engine& engine_;
  RouterOptions options_;
  std::shared_ptr<AdminExtension> extension_;
};

inline bool HeadersKept::keeps(std::string_view lower_name, std::string_view target) const {
  return every || Router::reads_header(lower_name) || (lower_name == "host" && Router::reads_host(target));
}

// A JSON reply that is not a provider answer (admin, 404 of an unknown route).
Plan json_plan(int status, std::string body);

}  // namespace llmchaos::mock
