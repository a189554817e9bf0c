// Loads gateway.toml (config.hpp): the policy through the client's own loader, the gateway tables here.
#include "llmchaos/gateway/config.hpp"

#include <fmt/format.h>

#include "llmchaos/core/toml_reader.hpp"

namespace llmchaos::gateway {
namespace {

constexpr std::string_view top_level_tables[] = {"workflow", "backoff", "route", "gateway",
                                                 "groups",   "tiers",   "keys",  "quality"};

void read_gateway_table(const toml::table& t, const std::string& file, GatewayConfig& c) {
  TomlReader r(t, file, "gateway");
  c.bind = r.opt_string("bind").value_or(c.bind);
  c.port = static_cast<std::uint16_t>(r.opt_int("port", 0, 65535).value_or(c.port));
  c.time_scale = r.opt_number("time_scale", 1e-6, 1e6).value_or(c.time_scale);
  c.upstream_api_key = r.opt_string("upstream_api_key").value_or(c.upstream_api_key);
  c.max_connections = static_cast<std::size_t>(r.opt_int("max_connections", 1, 100000).value_or(256));
  c.default_quality = r.opt_string("default_quality").value_or("");
  r.reject_unknown_keys();
}

// [route.NAME] tables again, for the gateway's keys (the policy loader has checked the rest).
void read_upstreams(const toml::table& routes, const std::string& file, GatewayConfig& c) {
  for (const auto& [key, node] : routes) {
    const std::string name(key.str());
    const auto* t = node.as_table();
    if (!t) continue;  // the policy loader already rejected it
    TomlReader r(*t, file, "route." + name);
    auto base_url = r.opt_string("base_url");
    auto dialect = r.opt_enum<Dialect>("dialect");
    if (auto w = r.opt_number("weight", 1e-6, 1e6)) c.weights[name] = *w;
    if (base_url.has_value() != dialect.has_value())
      r.fail_here(
          "an upstream route needs both base_url and dialect (a route without them is a model group's "
          "settings)");
    if (!base_url) continue;
    if (base_url->rfind("http://", 0) != 0)
      r.fail("base_url", "must start with http:// (\"" + *base_url + "\")");
    while (!base_url->empty() && base_url->back() == '/') base_url->pop_back();
    c.upstreams[name] = client::Endpoint{name, *dialect, *base_url};
  }
}

void read_groups(const toml::table& groups, const std::string& file, GatewayConfig& c) {
  for (const auto& [key, node] : groups) {
    const std::string name(key.str());
    const auto* t = node.as_table();
    if (!t) throw SpecError(pos_of(node, file), fmt::format("groups.{}: expected a table", name));
    TomlReader r(*t, file, "groups." + name);
    ModelGroup g{name, r.opt_string_array("routes").value_or(std::vector<std::string>{})};
    if (g.members.empty()) r.fail_here("needs routes = [\"upstream\", ...] (at least one)");
    for (const auto& m : g.members)
      if (!c.upstreams.contains(m))
        r.fail("routes",
               fmt::format("\"{}\" is not an upstream route (a [route.{}] with base_url and dialect)", m, m));
    if (c.upstreams.contains(name)) r.fail_here(fmt::format("\"{}\" is already an upstream route", name));
    // The stack classifies a group's answers in one dialect.
    for (const auto& m : g.members)
      if (c.upstreams.at(m).dialect != c.upstreams.at(g.members.front()).dialect)
        r.fail("routes",
               fmt::format("\"{}\" and \"{}\" speak different dialects (a group's routes speak one)",
                           g.members.front(), m));
    r.reject_unknown_keys();
    c.groups.emplace(name, std::move(g));
  }
}

void read_tiers(const toml::table& tiers, const std::string& file, GatewayConfig& c) {
  for (const auto& [key, node] : tiers) {
    const std::string name(key.str());
    const auto* t = node.as_table();
    if (!t) throw SpecError(pos_of(node, file), fmt::format("tiers.{}: expected a table", name));
    TomlReader r(*t, file, "tiers." + name);
    Tier tier;
    tier.name = name;
    tier.limits = client::rate_limits_from_toml(r);
    tier.quality = r.opt_string("quality").value_or("");
    r.reject_unknown_keys();
    c.tiers.emplace(name, std::move(tier));
  }
}

void read_keys(const toml::table& keys, const std::string& file, GatewayConfig& c) {
  for (const auto& [key, node] : keys) {
    const std::string api_key(key.str());
    const auto* tier = node.as_string();
    if (!tier)
      throw SpecError(pos_of(node, file),
                      fmt::format("keys.\"{}\": expected a tier name (a string)", api_key));
    if (!c.tiers.contains(tier->get()))
      throw SpecError(pos_of(node, file), fmt::format("keys: unknown tier \"{}\" (declare [tiers.{}])",
                                                      tier->get(), tier->get()));
    c.keys[api_key] = tier->get();
  }
}

void check_chain_member(const GatewayConfig& c, const std::string& name, const SourcePos& pos,
                        const std::string& where) {
  if (!c.upstreams.contains(name) && !c.groups.contains(name))
    throw SpecError(pos,
                    fmt::format("{}: \"{}\" is neither an upstream route nor a model group", where, name));
}

void read_qualities(const toml::table& qualities, const std::string& file, GatewayConfig& c) {
  for (const auto& [key, node] : qualities) {
    const std::string name(key.str());
    const auto* t = node.as_table();
    if (!t) throw SpecError(pos_of(node, file), fmt::format("quality.{}: expected a table", name));
    TomlReader r(*t, file, "quality." + name);
    auto chain = r.opt_string_array("chain").value_or(std::vector<std::string>{});
    if (chain.empty()) r.fail_here("needs chain = [\"route or group\", ...] (at least one)");
    for (std::size_t i = 0; i < chain.size(); ++i) {
      check_chain_member(c, chain[i], r.pos("chain"), "quality." + name + ".chain");
      for (std::size_t j = 0; j < i; ++j)
        if (chain[j] == chain[i]) r.fail("chain", fmt::format("lists \"{}\" twice", chain[i]));
    }
    r.reject_unknown_keys();
    c.qualities[name] = std::move(chain);
  }
}

}  // namespace

static GatewayConfig config_from_table(const toml::table& doc, const std::string& source_name) {
  GatewayConfig c;
  c.file = source_name;
  std::vector<std::string_view> extra(std::begin(gateway_route_keys), std::end(gateway_route_keys));
  c.policy = client::policy_from_toml(doc, source_name, true, extra);

  TomlReader top(doc, source_name);
  if (auto* g = top.opt_table("gateway")) read_gateway_table(*g, source_name, c);
  if (auto* routes = top.opt_table("route")) read_upstreams(*routes, source_name, c);
  if (c.upstreams.empty()) top.fail_here("no upstream: add a [route.NAME] with base_url and dialect");
  if (auto* groups = top.opt_table("groups")) read_groups(*groups, source_name, c);
  // A [route.X] without base_url carries a model group's settings: X must be a group.
  for (const auto& [name, rp] : c.policy.routes)
    if (!c.upstreams.contains(name) && !c.groups.contains(name))
      throw SpecError(top.pos("route"),
                      fmt::format("route.{}: no base_url / dialect, and no [groups.{}] either", name, name));
  if (auto* tiers = top.opt_table("tiers")) read_tiers(*tiers, source_name, c);
  if (auto* keys = top.opt_table("keys")) read_keys(*keys, source_name, c);
  if (auto* qualities = top.opt_table("quality")) read_qualities(*qualities, source_name, c);

  // The [workflow] chain is the "default" quality; its routes must resolve like any chain's.
  std::vector<std::string> workflow_chain{c.policy.workflow.primary};
  workflow_chain.insert(workflow_chain.end(), c.policy.workflow.fallback.begin(),
                        c.policy.workflow.fallback.end());
  for (const auto& name : workflow_chain) check_chain_member(c, name, top.pos("workflow"), "workflow");
  if (!c.qualities.contains("default")) c.qualities["default"] = workflow_chain;

  auto check_quality = [&](const std::string& q, const SourcePos& pos, const std::string& where) {
    if (!q.empty() && !c.qualities.contains(q))
      throw SpecError(pos, fmt::format("{}: unknown quality \"{}\" (declare [quality.{}])", where, q, q));
  };
  check_quality(c.default_quality, top.pos("gateway"), "gateway.default_quality");
  for (const auto& [name, tier] : c.tiers)
    check_quality(tier.quality, top.pos("tiers"), "tiers." + name + ".quality");

  for (auto key : top_level_tables) top.allow(key);
  top.reject_unknown_keys();
  return c;
}

GatewayConfig gateway_config_from_toml(std::string_view text, const std::string& source_name) {
  return config_from_table(parse_toml(text, source_name), source_name);
}

GatewayConfig load_gateway_config(const std::string& path) {
  return config_from_table(parse_toml_file(path), path);
}

client::Policy chain_policy(const GatewayConfig& config, const std::vector<std::string>& chain) {
  client::Policy p = config.policy;
  p.workflow.primary = chain.front();
  p.workflow.fallback.assign(chain.begin() + 1, chain.end());
  for (const auto& name : chain) {
    if (p.routes.contains(name)) continue;
    client::RoutePolicy r;
    r.name = name;
    p.routes.emplace(name, r);
  }
  return p.scaled(config.time_scale);
}

}  // namespace llmchaos::gateway
