#include "llmchaos/client/policy.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <set>

#include "llmchaos/core/toml_reader.hpp"

namespace llmchaos::client {
namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
constexpr std::string_view top_level_tables[] = {"workflow", "backoff", "route"};

// Times are milliseconds >= 0; counts that act as thresholds are >= 1.
double read_time(TomlReader& r, std::string_view key, double fallback) {
  return r.opt_number(key, 0, inf).value_or(fallback);
}
int read_count(TomlReader& r, std::string_view key, int fallback) {
  return static_cast<int>(r.opt_int(key, 1, 1'000'000).value_or(fallback));
}

WorkflowPolicy read_workflow(const toml::table& t, const std::string& file) {
  TomlReader r(t, file, "workflow");
  WorkflowPolicy w;
  w.name = r.opt_string("name").value_or(w.name);
  w.primary = r.opt_string("primary").value_or(w.primary);
  if (w.primary.empty()) r.fail("primary", "must name a route");
  w.max_total_attempts = read_count(r, "max_total_attempts", w.max_total_attempts);
  w.max_elapsed_ms = read_time(r, "max_elapsed_ms", w.max_elapsed_ms);
  w.max_extra_cost_usd = r.opt_number("max_extra_cost_usd", 0, inf).value_or(w.max_extra_cost_usd);
  w.attempt_timeout_ms = read_time(r, "attempt_timeout_ms", w.attempt_timeout_ms);
  w.replay_safe = r.opt_bool("replay_safe").value_or(w.replay_safe);
  w.background = r.opt_bool("background").value_or(w.background);
  w.fallback = r.opt_string_array("fallback").value_or(w.fallback);
  w.queue_allowed = r.opt_bool("queue_allowed").value_or(w.queue_allowed);
  w.degrade_allowed = r.opt_bool("degrade_allowed").value_or(w.degrade_allowed);
  w.degrade_text = r.opt_string("degrade_text").value_or(w.degrade_text);
  w.output_required = r.opt_string_array("output_required").value_or(w.output_required);

  std::set<std::string> seen;
  for (const auto& name : w.fallback) {
    if (name == w.primary) r.fail("fallback", fmt::format("lists the primary route \"{}\"", name));
    if (!seen.insert(name).second) r.fail("fallback", fmt::format("lists route \"{}\" twice", name));
  }
  r.reject_unknown_keys();
  return w;
}

BackoffSettings read_backoff(const toml::table& t, const std::string& file) {
  TomlReader r(t, file, "backoff");
  BackoffSettings b;
  b.base_ms = read_time(r, "base_ms", b.base_ms);
  b.cap_ms = read_time(r, "cap_ms", b.cap_ms);
  if (b.cap_ms < b.base_ms) r.fail("cap_ms", fmt::format("{} is below base_ms ({})", b.cap_ms, b.base_ms));
  r.reject_unknown_keys();
  return b;
}

BreakerSettings read_breaker(const toml::table& t, const std::string& file, const std::string& context) {
  TomlReader r(t, file, context);
  BreakerSettings b;
  b.failure_threshold = read_count(r, "failure_threshold", b.failure_threshold);
  b.success_threshold = read_count(r, "success_threshold", b.success_threshold);
  b.open_ms = read_time(r, "open_ms", b.open_ms);
  b.half_open_max_probes = read_count(r, "half_open_max_probes", b.half_open_max_probes);
  r.reject_unknown_keys();
  return b;
}

RoutePolicy read_route(const toml::table& t, const std::string& name, const std::string& file, bool strict,
                       const std::vector<std::string_view>& extra_route_keys) {
  const std::string context = "route." + name;
  TomlReader r(t, file, context);
  RoutePolicy p;
  p.name = name;
  p.expected_latency_ms = read_time(r, "expected_latency_ms", p.expected_latency_ms);
  p.cost_per_attempt_usd = r.opt_number("cost_per_attempt_usd", 0, inf).value_or(p.cost_per_attempt_usd);
  p.approved = r.opt_bool("approved").value_or(p.approved);
  p.quota_cooldown_ms = read_time(r, "quota_cooldown_ms", p.quota_cooldown_ms);
  p.rate_cooldown = r.opt_bool("rate_cooldown").value_or(p.rate_cooldown);
  if (auto* breaker = r.opt_table("breaker")) p.breaker = read_breaker(*breaker, file, context + ".breaker");
  if (strict) {
    for (auto key : extra_route_keys) r.allow(key);  // owned by another loader (the mock's script keys)
    r.reject_unknown_keys();
  }
  return p;
}

}  // namespace

const RoutePolicy& Policy::route(const std::string& name) const {
  static const RoutePolicy defaults{};
  auto it = routes.find(name);
  return it == routes.end() ? defaults : it->second;
}

Policy Policy::scaled(double time_scale) const {
  Policy p = *this;
  p.workflow.max_elapsed_ms *= time_scale;
  p.workflow.attempt_timeout_ms *= time_scale;
  p.backoff.base_ms *= time_scale;
  p.backoff.cap_ms *= time_scale;
  for (auto& [name, route] : p.routes) {
    route.expected_latency_ms *= time_scale;
    route.breaker.open_ms *= time_scale;
    route.quota_cooldown_ms *= time_scale;
  }
  return p;
}

Policy policy_from_toml(const toml::table& doc, const std::string& file, bool allow_other_keys,
                        const std::vector<std::string_view>& extra_route_keys) {
  TomlReader top(doc, file);
  Policy policy;
  // Each table on its own, so every broken one is reported (lint shows them all).
  std::vector<SpecError> errors;
  collect_errors(errors, [&] {
    if (auto* w = top.opt_table("workflow")) policy.workflow = read_workflow(*w, file);
  });
  collect_errors(errors, [&] {
    if (auto* b = top.opt_table("backoff")) policy.backoff = read_backoff(*b, file);
  });

  // Route tables are shared with the fault script: they are checked key by key only when the caller
  // says which other keys exist (or the file is a standalone policy); otherwise the script loader,
  // which reads the same tables, rejects the typos.
  const bool strict_routes = !allow_other_keys || !extra_route_keys.empty();
  bool routes_given = false;
  const toml::table* routes = nullptr;
  collect_errors(errors, [&] { routes = top.opt_table("route"); });
  if (routes) {
    routes_given = true;
    for (const auto& [key, node] : *routes) {
      collect_errors(
          errors, [&, &key = key, &node = node] {  // init-captures: clang 14 cannot capture a binding
            const std::string name(key.str());
            auto* t = node.as_table();
            if (!t) throw SpecError(pos_of(node, file), fmt::format("route.{}: expected a table", name));
            policy.routes.emplace(name, read_route(*t, name, file, strict_routes, extra_route_keys));
          });
    }
  }
  if (!allow_other_keys) {
    for (auto key : top_level_tables) top.allow(key);
    collect_errors(errors, [&] { top.reject_unknown_keys(); });
  }
  throw_errors(std::move(errors));

  const auto& w = policy.workflow;
  if (routes_given) {
    auto where = [&](std::string_view key) {
      const auto* wt = doc.get_as<toml::table>("workflow");
      return wt && wt->contains(key) ? pos_of(*wt->get(key), file) : top.pos("workflow");
    };
    auto known = [&] {
      std::string out;
      for (const auto& [name, r] : policy.routes) out += (out.empty() ? "" : ", ") + name;
      return out;
    };
    if (!policy.routes.contains(w.primary))
      throw SpecError(where("primary"),
                      fmt::format("workflow.primary: unknown route \"{}\" (routes: {})", w.primary, known()));
    for (const auto& name : w.fallback)
      if (!policy.routes.contains(name))
        throw SpecError(where("fallback"),
                        fmt::format("workflow.fallback: unknown route \"{}\" (routes: {})", name, known()));
  } else {
    // No route tables: the named routes exist with default settings.
    auto add_default = [&](const std::string& name) {
      RoutePolicy r;
      r.name = name;
      policy.routes.emplace(name, r);
    };
    add_default(w.primary);
    for (const auto& name : w.fallback) add_default(name);
  }
  return policy;
}

Policy load_policy_file(const std::string& path) {
  return policy_from_toml(parse_toml_file(path), path, false);
}

Policy load_policy_file(const std::string& path, const std::vector<std::string_view>& extra_route_keys) {
  return policy_from_toml(parse_toml_file(path), path, false, extra_route_keys);
}

RateLimits rate_limits_from_toml(TomlReader& r) {
  RateLimits limits;
  if (auto v = r.opt_int("rpm", 1, 1'000'000'000)) limits.requests_per_minute = static_cast<int>(*v);
  if (auto v = r.opt_int("rpd", 1, 1'000'000'000)) limits.requests_per_day = static_cast<int>(*v);
  if (auto v = r.opt_number("tpm", 1, 1e12)) limits.tokens_per_minute = *v;
  return limits;
}

}  // namespace llmchaos::client
