// Request -> plan without a socket. Data plane: /{route}/... and /{ns}/{route}/... (plus each route's
// side-effect endpoint); control plane: /__llmchaos/... (token-guarded) and /metrics.
#include "llmchaos/mockprovider/router.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <boost/json.hpp>
#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <iterator>

#include "llmchaos/core/json_text.hpp"
#include "llmchaos/core/ledger_json.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/mockprovider/dialect.hpp"
#include "llmchaos/mockprovider/script.hpp"

namespace json = boost::json;

namespace llmchaos::mock {
namespace {

constexpr std::string_view admin_prefix = "/__llmchaos/";
constexpr std::string_view side_effect_suffix = "/__llmchaos/side_effect";

std::vector<std::string_view> split_path(std::string_view path) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    const auto j = path.find('/', i);
    const auto end = j == std::string_view::npos ? path.size() : j;
    if (end > i) out.push_back(path.substr(i, end - i));
    i = end;
  }
  return out;
}

Plan error_json(int status, std::string_view message) {
  return json_plan(status, json::serialize(json::object{{"error", message}}));
}

Plan ok_json(json::value v) {
  return json_plan(200, json::serialize(v));
}

// Where a provider request goes: namespace, route and the path below the route (query kept); views
// into the request's target.
struct Target {
  std::string_view ns, route, rest;
};

// The first n segments of a path as split_path gives them (fewer when the path has fewer), without
// building the whole list: resolve runs for every provider request.
template <std::size_t N>
std::size_t first_segments(std::string_view path, std::array<std::string_view, N>& out) {
  std::size_t n = 0, i = 0;
  while (n < N && i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    const auto j = path.find('/', i);
    const auto end = j == std::string_view::npos ? path.size() : j;
    if (end > i) out[n++] = path.substr(i, end - i);
    i = end;
  }
  return n;
}

std::optional<Target> resolve(const Engine& engine, std::string_view target) {
  const auto path = target.substr(0, target.find('?'));
  std::array<std::string_view, 2> segs;
  const std::size_t nsegs = first_segments(path, segs);
  if (nsegs == 0) return std::nullopt;
  const auto rest_after = [&](std::size_t n) {
    const auto end = segs[n - 1].data() + segs[n - 1].size() - target.data();
    return target.substr(static_cast<std::size_t>(end));
  };
  // One engine lookup (one lock) for both readings: /{ns}/{route}/... first, then /{route}/.... The
  // first segment's check as a namespace name only when it names one (most requests have no namespace).
  int found = engine.route_segments(segs[0], nsegs >= 2 ? segs[1] : std::string_view{});
  if (found == 2 && !valid_name(segs[0])) found = engine.route_segments(segs[0], {});
  switch (found) {
    case 2:
      return Target{segs[0], segs[1], rest_after(2)};
    case 1:
      return Target{{}, segs[0], rest_after(1)};
    default:
      return std::nullopt;
  }
}

Plan unknown_route(const Engine& engine, std::string_view target) {
  const auto segs = split_path(target.substr(0, target.find('?')));
  const auto first = segs.empty() ? std::string_view{} : segs[0];
  std::string known;
  for (const auto& r : engine.routes("")) known += (known.empty() ? "" : ", ") + r;
  return json_plan(
      404, json::serialize(json::object{
               {"error", json::object{{"message", fmt::format("no route \"{}\" on this mock provider (routes "
                                                              "of the default namespace: {})",
                                                              first, known.empty() ? "none" : known)},
                                      {"type", "not_found_error"},
                                      {"code", "unknown_route"}}}}));
}

Routed side_effect(Engine& engine, const std::string& ns, const RawRequest& req) {
  if (req.method != "POST") return {error_json(405, "side effects are recorded with POST"), {}};
  boost::system::error_code ec;
  auto v = json::parse(req.body, ec);
  const auto* o = !ec && v.is_object() ? &v.get_object() : nullptr;
  const auto* op = o ? o->if_contains("operation_id") : nullptr;
  const auto* tool = o ? o->if_contains("tool") : nullptr;
  if (!op || !op->is_string() || op->get_string().empty())
    return {error_json(400, R"(expected a JSON object {"operation_id": "...", "tool": "..."})"), {}};
  const std::string tool_name = tool && tool->is_string() ? std::string(tool->get_string()) : "";
  const auto before = engine.side_effects(ns);
  const bool duplicate = std::any_of(before.begin(), before.end(),
                                     [&](const SideEffect& s) { return s.operation_id == op->get_string(); });
  engine.record_side_effect(ns, std::string(op->get_string()), tool_name);
  return {ok_json(json::object{{"ok", true}, {"duplicate", duplicate}}), {}};
}

json::value ledger_json(const std::vector<LedgerEntry>& entries) {
  json::array a;
  for (const auto& e : entries) a.push_back(to_json_value(e));
  return a;
}

json::value effects_json(const std::vector<SideEffect>& effects) {
  json::array a;
  for (const auto& e : effects) a.push_back(to_json_value(e));
  return a;
}

// `Authorization: Bearer TOKEN`, the scheme in any case (RFC 9110 11.1), blanks after it ignored.
// Compares every byte whatever the first difference, so the answer's timing does not tell how much of a
// guessed token was right.
bool same_token(std::string_view given, std::string_view token) {
  unsigned char differ = given.size() == token.size() ? 0 : 1;
  for (std::size_t i = 0; i < given.size(); ++i)
    differ |= static_cast<unsigned char>(given[i] ^ token[i % std::max<std::size_t>(token.size(), 1)]);
  return differ == 0 && !token.empty();
}

bool bearer_matches(std::string_view value, std::string_view token) {
  constexpr std::string_view scheme = "bearer";
  if (value.size() <= scheme.size() || (value[scheme.size()] != ' ' && value[scheme.size()] != '\t'))
    return false;
  for (std::size_t i = 0; i < scheme.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(value[i])) != scheme[i]) return false;
  auto rest = value.substr(scheme.size());
  rest.remove_prefix(std::min(rest.find_first_not_of(" \t"), rest.size()));
  return same_token(rest, token);
}

bool method_listed(std::string_view methods, std::string_view method) {
  for (std::size_t i = 0; i < methods.size();) {
    const auto end = std::min(methods.find(',', i), methods.size());
    if (methods.substr(i, end - i) == method) return true;
    i = methods.find_first_not_of(", ", end);
    if (i == std::string_view::npos) break;
  }
  return false;
}

Routed method_not_allowed(std::string_view method, std::string_view path, std::string_view allowed) {
  Plan p = error_json(
      405, fmt::format("{} is not allowed on {}{} (allowed: {})", method, admin_prefix, path, allowed));
  p.headers.emplace_back("allow", std::string(allowed));
  return {std::move(p), {}};
}

Routed no_admin_endpoint(std::string_view path) {
  return {error_json(404, fmt::format("no admin endpoint {}{}", admin_prefix, path)), {}};
}

// A namespace no script was installed in (or deleted): 404, not an empty answer.
Routed unknown_namespace(const std::string& name) {
  return {error_json(404, fmt::format("no namespace \"{}\" (install one with PUT {}ns/{}/script)", name,
                                      admin_prefix, name)),
          {}};
}

// Every endpoint and the methods it answers; another method on it is 405.
struct AdminEndpoint {
  std::string_view name, methods;
  bool per_ns_only;
};
constexpr AdminEndpoint admin_endpoints[] = {{"script", "PUT, POST", false},
                                             {"reset", "POST", false},
                                             {"ledger", "GET", false},
                                             {"side_effects", "GET", false},
                                             {"side_effect", "POST", true}};

// nullptr when `what` names no endpoint (of every namespace when `all`).
const AdminEndpoint* find_admin_endpoint(std::string_view what, bool all) {
  for (const auto& e : admin_endpoints)
    if (e.name == what && (!all || !e.per_ns_only)) return &e;
  return nullptr;
}

}  // namespace

// /__llmchaos/X (every namespace), /__llmchaos/ns/{ns}/X, /__llmchaos/ns/{ns} (the namespace itself).
AdminPath parse_admin_path(const std::vector<std::string_view>& segs) {
  if (segs.size() == 1) return {AdminPath::Kind::endpoint, "", segs[0], true};
  if (segs.size() == 3 && segs[0] == "ns" && valid_name(segs[1]))
    return {AdminPath::Kind::endpoint, std::string(segs[1]), segs[2], false};
  if (segs.size() == 2 && segs[0] == "ns" && valid_name(segs[1]))
    return {AdminPath::Kind::namespace_itself, std::string(segs[1]), {}, false};
  return {};
}

namespace {}  // namespace

std::string RawRequest::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return {};
}

Plan json_plan(int status, std::string body) {
  Plan p;
  p.status = status;
  p.body = std::move(body);
  p.headers.emplace_back("content-type", "application/json");
  return p;
}

Router::Router(Engine& engine, RouterOptions options) : engine_(engine), options_(std::move(options)) {}

void Router::set_extension(std::shared_ptr<AdminExtension> extension) {
  extension_ = std::move(extension);
}

bool Router::extended(std::string_view target) const {
  if (!extension_ || target.substr(0, admin_prefix.size()) != admin_prefix) return false;
  const auto path = target.substr(0, target.find('?'));
  return extension_->handles(path.substr(admin_prefix.size()));
}

namespace {
// The names Router::reads_header says yes to: the engine's ledger headers, the admin token header, and
// every header a dialect reads a credential from (require_auth), ordered by length, so that a name is
// compared only with those of its own length (most fields of a request, host, content-type,
// user-agent, meet none or one).
struct ReadHeaders {
  std::vector<std::string_view> names;
  std::array<std::size_t, 65> from{};  // the names of n < 64 bytes: names[from[n], from[n + 1])
};

// Built once, out of line: reads_header itself stays a small function (it runs for every header of
// every request).
[[gnu::noinline]] ReadHeaders read_headers() {
  ReadHeaders r;
  r.names = {"x-request-id",          "request-id",
             "idempotency-key",       "x-stainless-retry-count",
             "authorization",         "x-llmchaos-admin-token",
             "amz-sdk-invocation-id", "amz-sdk-request"};
  for (const Dialect d : registered_dialects())
    for (const auto& c : dialect_spec(d).auth.headers)
      if (std::find(r.names.begin(), r.names.end(), c.header) == r.names.end()) r.names.push_back(c.header);
  std::stable_sort(r.names.begin(), r.names.end(), [](auto a, auto b) { return a.size() < b.size(); });
  for (std::size_t n = 0; n < r.from.size(); ++n)
    r.from[n] = static_cast<std::size_t>(
        std::find_if(r.names.begin(), r.names.end(), [n](auto s) { return s.size() >= n; }) -
        r.names.begin());
  return r;
}
}  // namespace

bool Router::reads_host(std::string_view target) {
  return target.substr(0, admin_prefix.size()) == admin_prefix;
}

bool Router::reads_header(std::string_view name) {
  static const ReadHeaders read = read_headers();
  if (name.size() >= 64) return std::find(read.names.begin(), read.names.end(), name) != read.names.end();
  for (std::size_t i = read.from[name.size()]; i < read.from[name.size() + 1]; ++i)
    if (std::memcmp(read.names[i].data(), name.data(), name.size()) == 0) return true;
  return false;
}

Routed Router::handle(const RawRequest& req) {
  const std::string_view target = req.target;
  const auto path = target.substr(0, target.find('?'));
  if (path == "/metrics") {
    Plan p = json_plan(200, engine_.metrics_text());
    p.headers = {{"content-type", "text/plain; version=0.0.4"}};
    return {std::move(p), {}};
  }
  if (path.substr(0, admin_prefix.size()) == admin_prefix)
    return admin(req, path.substr(admin_prefix.size()));
  auto where = resolve(engine_, target);
  if (!where) return {unknown_route(engine_, target), {}};
  if (where->rest == side_effect_suffix) return side_effect(engine_, std::string(where->ns), req);

  const RequestView in{.ns = where->ns,
                       .route = where->route,
                       .path = where->rest.empty() ? std::string_view("/") : where->rest,
                       .method = req.method,
                       .body = req.body,
                       .idempotency_key = {},  // read from the headers
                       .stainless_retry_count = {},
                       .headers = req.headers,
                       .protocol = req.protocol};
  auto planned = engine_.begin(in);
  Routed out{std::move(planned.plan), {}};
  if (options_.report_targets) {
    out.ns = in.ns;
    out.route = in.route;
    out.path = in.path;
  }
  if (planned.seq != 0) out.seq = planned.seq;
  return out;
}

// An admin request's phases: health (open to probes), the token, the app's extension, then where the
// path points (parse_admin_path), the endpoint and its method, and the endpoint's own work.
Routed Router::admin(const RawRequest& req, std::string_view path) {
  const auto segs = split_path(path);
  const auto& m = req.method;
  if (segs.size() == 1 && (segs[0] == "health" || segs[0] == "ready")) {
    // Liveness and readiness stay open to probes even when a token guards the rest. The router answers
    // only once the server listens, and serve, proxy and gateway install their scripts before that.
    if (m != "GET" && m != "HEAD") return method_not_allowed(m, path, "GET, HEAD");
    return {ok_json(json::object{{"status", segs[0] == "ready" ? "ready" : "ok"}}), {}};
  }
  if (!admin_token_accepted(req))
    return {error_json(401, "admin token required (missing or wrong): send Authorization: Bearer TOKEN"), {}};
  if (extension_ && extension_->handles(path)) {
    auto reply = extension_->handle(req, path);
    Plan p = json_plan(reply.status, std::move(reply.body));
    p.headers = {{"content-type", std::move(reply.content_type)}};
    for (auto& h : reply.headers) p.headers.push_back(std::move(h));
    return {std::move(p), {}};
  }
  const AdminPath where = parse_admin_path(segs);
  if (where.kind == AdminPath::Kind::none) return no_admin_endpoint(path);
  if (where.kind == AdminPath::Kind::namespace_itself) {
    if (m != "DELETE") return method_not_allowed(m, path, "DELETE");
    if (engine_.routes(where.ns).empty()) return unknown_namespace(where.ns);
    engine_.remove(where.ns);
    return {ok_json(json::object{{"ok", true}}), {}};
  }
  const auto* endpoint = find_admin_endpoint(where.what, where.all);
  if (!endpoint) return no_admin_endpoint(path);
  if (!method_listed(endpoint->methods, m)) return method_not_allowed(m, path, endpoint->methods);
  if (!where.all && where.what != "script" && engine_.routes(where.ns).empty())
    return unknown_namespace(where.ns);
  if (auto routed = run_admin_endpoint(req, where)) return std::move(*routed);
  return no_admin_endpoint(path);
}

bool Router::admin_token_accepted(const RawRequest& req) const {
  return options_.admin_token.empty() || bearer_matches(req.header("authorization"), options_.admin_token) ||
         same_token(req.header("x-llmchaos-admin-token"), options_.admin_token);
}

std::optional<Routed> Router::run_admin_endpoint(const RawRequest& req, const AdminPath& where) {
  const auto& m = req.method;
  const auto& ns = where.ns;
  const bool all = where.all;
  if (where.what == "script" && (m == "PUT" || m == "POST")) return install_script(ns, req.body);
  if (where.what == "reset" && m == "POST") {
    if (all)
      engine_.reset_all();
    else
      engine_.reset(ns);
    return Routed{ok_json(json::object{{"ok", true}}), {}};
  }
  if (where.what == "ledger" && m == "GET")
    return Routed{json_plan(200, compact_json(ledger_json(all ? engine_.ledger_all() : engine_.ledger(ns)))),
                  {}};
  if (where.what == "side_effects" && m == "GET")
    return Routed{json_plan(200, compact_json(effects_json(all ? engine_.side_effects_all()
                                                               : engine_.side_effects(ns)))),
                  {}};
  if (where.what == "side_effect" && !all) return side_effect(engine_, ns, req);
  return std::nullopt;
}

Routed Router::install_script(const std::string& ns, const std::string& text) {
  try {
    auto script = parse_script_text(text, ns.empty() ? "script" : "script of namespace " + ns);
    json::array names;
    for (const auto& [name, r] : script.routes) names.push_back(json::string(name));
    engine_.install(ns, std::move(script));
    return {ok_json(json::object{{"ok", true}, {"ns", ns}, {"routes", std::move(names)}}), {}};
  } catch (const SpecErrors& e) {  // every error, one per line
    std::string all;
    for (const auto& one : e.all()) all += (all.empty() ? "" : "\n") + std::string(one.what());
    return {error_json(400, all), {}};
  } catch (const SpecError& e) {
    return {error_json(400, e.what()), {}};
  }
}

Plan Router::reject(std::string_view target, int status) const {
  if (status == 413 || status == 503) {
    if (auto where = resolve(engine_, target)) {
      const auto dialect = engine_.route_dialect(where->ns, where->route);
      const auto& d = dialect_spec(dialect.value_or(Dialect::openai));
      auto reply = d.error(status == 413 ? ErrorKind::too_large : ErrorKind::overloaded, {});
      auto plan = json_plan(reply.status, std::move(reply.body));
      for (auto& h : reply.headers) plan.headers.push_back(std::move(h));
      return plan;
    }
    if (status == 413) return error_json(413, "request body too large");
  }
  if (status == 431) return error_json(431, "request header fields too large");
  if (status == 414) return error_json(414, "request target (URL) too long");
  if (status == 503) return error_json(503, "too many connections");
  return error_json(status, "bad request");
}

}  // namespace llmchaos::mock
