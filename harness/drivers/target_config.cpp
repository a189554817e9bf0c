// Rendering of --target-config templates (target_config.hpp).
#include "target_config.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>

#include "external.hpp"
#include "llmchaos/core/toml_text.hpp"

namespace llmchaos::harness::driver_units {
namespace {

// A JSON string's content (boost::json writes the quotes: drop them).
std::string json_escaped(std::string_view s) {
  const auto whole = boost::json::serialize(boost::json::value(boost::json::string_view(s.data(), s.size())));
  return whole.substr(1, whole.size() - 2);
}

std::string string_array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + toml_string(items[i]);
  return out + "]";
}

std::string number(double v) {
  return fmt::format("{}", v);
}

}  // namespace

std::string case_policy_toml(const CaseEnv& env) {
  const auto& p = env.c->policy;
  const auto& w = p.workflow;
  std::string out = "[workflow]\n";
  out += fmt::format("name = {}\nprimary = {}\nfallback = {}\n", toml_string(w.name), toml_string(w.primary),
                     string_array(w.fallback));
  out += fmt::format("max_total_attempts = {}\nmax_elapsed_ms = {}\nattempt_timeout_ms = {}\n",
                     w.max_total_attempts, number(w.max_elapsed_ms), number(w.attempt_timeout_ms));
  if (std::isfinite(w.max_extra_cost_usd))
    out += fmt::format("max_extra_cost_usd = {}\n", number(w.max_extra_cost_usd));
  out += fmt::format("replay_safe = {}\nqueue_allowed = {}\ndegrade_allowed = {}\ndegrade_text = {}\n",
                     w.replay_safe, w.queue_allowed, w.degrade_allowed, toml_string(w.degrade_text));
  if (!w.output_required.empty())
    out += fmt::format("output_required = {}\n", string_array(w.output_required));
  if (w.background) out += "background = true\n";  // only then: the configs of other cases keep their text
  out += fmt::format("\n[backoff]\nbase_ms = {}\ncap_ms = {}\n", number(p.backoff.base_ms),
                     number(p.backoff.cap_ms));
  auto policy_keys = [&](const std::string& name) {
    const auto& r = p.route(name);
    out += fmt::format("expected_latency_ms = {}\ncost_per_attempt_usd = {}\napproved = {}\n",
                       number(r.expected_latency_ms), number(r.cost_per_attempt_usd), r.approved);
    // Only when kept: the configs of other cases keep their text.
    if (r.quota_cooldown_ms > 0) out += fmt::format("quota_cooldown_ms = {}\n", number(r.quota_cooldown_ms));
    if (r.rate_cooldown) out += "rate_cooldown = true\n";
    const auto& b = r.breaker;
    out += fmt::format(
        "breaker = {{ failure_threshold = {}, success_threshold = {}, open_ms = {}, half_open_max_probes = "
        "{} }}\n",
        b.failure_threshold, b.success_threshold, number(b.open_ms), b.half_open_max_probes);
  };
  for (const auto& [name, endpoint] : env.endpoints) {
    out += fmt::format("\n[route.{}]\nbase_url = {}\ndialect = {}\n", toml_string(name),
                       toml_string(endpoint.base_url), toml_string(to_string(endpoint.dialect)));
    if (env.c->weights.contains(name))
      out += fmt::format("weight = {}\n", number(env.c->weights.at(name)));  // a group member's share
    policy_keys(name);
  }
  // A model group: a route table without base_url holds the group's policy keys (the gateway's format).
  for (const auto& [name, members] : env.c->groups) {
    out += fmt::format("\n[route.{}]\n", toml_string(name));
    policy_keys(name);
  }
  return out;
}

namespace {

// The case's routes in order: primary, the fallbacks, then the others.
std::vector<std::string> ordered_routes(const CaseEnv& env) {
  const auto& w = env.c->policy.workflow;
  std::vector<std::string> out;
  auto add = [&](const std::string& r) {
    if (env.endpoints.contains(r) && std::find(out.begin(), out.end(), r) == out.end()) out.push_back(r);
  };
  add(w.primary);
  for (const auto& f : w.fallback) add(f);
  for (const auto& [name, e] : env.endpoints) add(name);
  return out;
}

boost::json::object route_json(const CaseEnv& env, const std::string& name) {
  const auto& endpoint = env.endpoints.at(name);
  const auto& r = env.c->policy.route(name);
  return {{"name", name},
          {"base_url", endpoint.base_url},
          {"sdk_base_url", sdk_base_url(endpoint)},
          {"dialect", to_string(endpoint.dialect)},
          {"expected_latency_ms", r.expected_latency_ms},
          {"cost_per_attempt_usd", r.cost_per_attempt_usd},
          {"approved", r.approved}};
}

boost::json::array routes_array(const CaseEnv& env, bool fallbacks_only) {
  const auto& fallback = env.c->policy.workflow.fallback;
  boost::json::array out;
  for (const auto& name : ordered_routes(env))
    if (!fallbacks_only || std::find(fallback.begin(), fallback.end(), name) != fallback.end())
      out.push_back(route_json(env, name));
  return out;
}

// {{workflow.NAME}}: one workflow key (max_retries: max_total_attempts - 1, what a retry setting takes).
std::optional<std::string> workflow_value(const CaseEnv& env, std::string_view key, Escape escape) {
  const auto& w = env.c->policy.workflow;
  if (key == "max_total_attempts") return std::to_string(w.max_total_attempts);
  if (key == "max_retries") return std::to_string(std::max(0, w.max_total_attempts - 1));
  if (key == "max_elapsed_ms") return number(w.max_elapsed_ms);
  if (key == "attempt_timeout_ms") return number(w.attempt_timeout_ms);
  if (key == "replay_safe") return w.replay_safe ? "true" : "false";
  if (key == "queue_allowed") return w.queue_allowed ? "true" : "false";
  if (key == "degrade_allowed") return w.degrade_allowed ? "true" : "false";
  if (key == "name") return escape == Escape::json ? json_escaped(w.name) : toml_escaped(w.name);
  return std::nullopt;
}

// Calls `on_placeholder(name, line)` for each {{name}} and `on_text` for the text between; throws
// std::invalid_argument naming the line of an unclosed {{.
template <class Text, class Placeholder>
void scan_template(std::string_view text, const std::string& source, Text on_text,
                   Placeholder on_placeholder) {
  std::size_t at = 0;
  for (;;) {
    const auto open = text.find("{{", at);
    on_text(text.substr(at, open == std::string_view::npos ? std::string_view::npos : open - at));
    if (open == std::string_view::npos) return;
    const int line = 1 + static_cast<int>(std::count(text.begin(),
                                                     text.begin() + static_cast<std::ptrdiff_t>(open), '\n'));
    const auto close = text.find("}}", open + 2);
    if (close == std::string_view::npos)
      throw std::invalid_argument(fmt::format("{}:{}: unclosed {{{{", source, line));
    on_placeholder(text.substr(open + 2, close - open - 2), line);
    at = close + 2;
  }
}

constexpr std::string_view case_placeholders[] = {
    "policy",  "case",        "namespace",   "mock_base_url", "time_scale",  "key",
    "primary", "policy_json", "routes_json", "fallback_json", "tier_limits", "groups"};
constexpr std::string_view route_fields[] = {"base_url", "sdk_base_url", "dialect"};
constexpr std::string_view workflow_keys[] = {"max_total_attempts", "max_retries", "max_elapsed_ms",
                                              "attempt_timeout_ms", "replay_safe", "queue_allowed",
                                              "degrade_allowed",    "name"};

std::string_view trimmed(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

bool built_in_route_field(std::string_view field) {
  return std::find(std::begin(route_fields), std::end(route_fields), field) != std::end(route_fields);
}

bool known_placeholder(std::string_view name, const RouteFields& declared) {
  if (std::find(std::begin(case_placeholders), std::end(case_placeholders), name) !=
      std::end(case_placeholders))
    return true;
  if (name.starts_with("workflow."))
    return std::find(std::begin(workflow_keys), std::end(workflow_keys), name.substr(9)) !=
           std::end(workflow_keys);
  if (name.starts_with("route.")) {
    if (name.ends_with("?")) name.remove_suffix(1);  // optional: "" when the case has no such route
    const auto dot = name.rfind('.');
    if (dot <= 6) return false;
    const auto field = name.substr(dot + 1);
    return built_in_route_field(field) || declared.contains(std::string(field));
  }
  return false;
}

bool is_token(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
    return std::isalnum(static_cast<unsigned char>(ch)) || ch == '-' || ch == '_';
  });
}

// `DIALECT: VALUE, DIALECT: VALUE` (a value may be empty) -> dialect name -> value.
std::map<std::string, std::string> read_route_field(std::string_view field, std::string_view value,
                                                    const std::string& source, int line_no) {
  if (!is_token(field) || built_in_route_field(field))
    throw std::invalid_argument(
        fmt::format("{}:{}: llmchaos.route_field.{} is not a new field name (built in: base_url, "
                    "sdk_base_url, dialect)",
                    source, line_no, field));
  std::map<std::string, std::string> out;
  for (std::size_t at = 0; at <= value.size();) {
    const auto end = std::min(value.find(',', at), value.size());
    const auto item = trimmed(value.substr(at, end - at));
    at = end + 1;
    if (item.empty()) continue;
    const auto colon = item.find(':');
    const auto dialect = trimmed(item.substr(0, colon));
    if (colon == std::string_view::npos || !parse_enum<Dialect>(dialect))
      throw std::invalid_argument(
          fmt::format("{}:{}: llmchaos.route_field.{}: \"{}\" is not \"DIALECT: VALUE\" with a dialect "
                      "the mock speaks",
                      source, line_no, field, item));
    out[std::string(dialect)] = std::string(trimmed(item.substr(colon + 1)));
  }
  return out;
}

}  // namespace

std::string case_policy_json(const CaseEnv& env) {
  const auto& p = env.c->policy;
  const auto& w = p.workflow;
  boost::json::array fallback, required;
  for (const auto& f : w.fallback) fallback.emplace_back(f);
  for (const auto& f : w.output_required) required.emplace_back(f);
  boost::json::object workflow{{"name", w.name},
                               {"primary", w.primary},
                               {"fallback", fallback},
                               {"max_total_attempts", w.max_total_attempts},
                               {"max_elapsed_ms", w.max_elapsed_ms},
                               {"attempt_timeout_ms", w.attempt_timeout_ms},
                               {"replay_safe", w.replay_safe},
                               {"queue_allowed", w.queue_allowed},
                               {"degrade_allowed", w.degrade_allowed},
                               {"degrade_text", w.degrade_text},
                               {"output_required", required}};
  if (std::isfinite(w.max_extra_cost_usd)) workflow["max_extra_cost_usd"] = w.max_extra_cost_usd;
  if (w.background) workflow["background"] = true;
  boost::json::object out{{"workflow", workflow},
                          {"backoff", {{"base_ms", p.backoff.base_ms}, {"cap_ms", p.backoff.cap_ms}}},
                          {"routes", routes_array(env, false)}};
  return boost::json::serialize(out);
}

std::string case_routes_json(const CaseEnv& env, bool fallbacks_only) {
  return boost::json::serialize(routes_array(env, fallbacks_only));
}

bool uses_placeholder(std::string_view text, std::string_view name) {
  bool used = false;
  try {
    scan_template(
        text, "", [](std::string_view) {}, [&](std::string_view n, int) { used = used || n == name; });
  } catch (const std::invalid_argument&) {
  }
  return used;
}

TargetDeclarations read_target_declarations(std::string_view text, const std::string& source) {
  TargetDeclarations out;
  int line_no = 0;
  for (std::size_t at = 0; at < text.size();) {
    const auto end = std::min(text.find('\n', at), text.size());
    auto line = trimmed(text.substr(at, end - at));
    at = end + 1;
    ++line_no;
    for (std::string_view marker : {"#", "//", ";"})
      if (line.starts_with(marker)) {
        line = trimmed(line.substr(marker.size()));
        break;
      }
    if (!line.starts_with("llmchaos.")) continue;
    const auto eq = line.find('=');
    if (eq == std::string_view::npos)
      throw std::invalid_argument(
          fmt::format("{}:{}: \"{}\" is not \"llmchaos.KEY = VALUE\"", source, line_no, line));
    const auto key = trimmed(line.substr(9, eq - 9));
    auto value = trimmed(line.substr(eq + 1));
    if (value.size() >= 2 && (value.front() == '"' || value.front() == '\'') && value.back() == value.front())
      value = value.substr(1, value.size() - 2);
    if (key == "capabilities") {
      out.capabilities = std::string(value);
    } else if (key == "time_scale") {
      if (value != "true" && value != "false")
        throw std::invalid_argument(
            fmt::format("{}:{}: llmchaos.time_scale is true or false, not \"{}\"", source, line_no, value));
      out.time_scale = value == "true";
    } else if (key == "drain") {
      out.drain = std::string(value);
    } else if (key == "header") {
      out.headers.emplace_back(value);
    } else if (key.starts_with("route_field.")) {
      out.route_fields[std::string(key.substr(12))] =
          read_route_field(key.substr(12), value, source, line_no);
    } else {
      throw std::invalid_argument(
          fmt::format("{}:{}: unknown declaration llmchaos.{} (keys: capabilities, time_scale, drain, "
                      "header, route_field.NAME)",
                      source, line_no, key));
    }
  }
  return out;
}

std::pair<std::string, std::string> split_header(std::string_view spec) {
  const auto colon = spec.find(':');
  const auto name = colon == std::string_view::npos ? std::string_view() : trimmed(spec.substr(0, colon));
  if (!is_token(name))
    throw std::invalid_argument(fmt::format("--target-header \"{}\" is not \"NAME: TEMPLATE\"", spec));
  return {std::string(name), std::string(trimmed(spec.substr(colon + 1)))};
}

std::string check_target_template(std::string_view text, const std::string& source,
                                  const RouteFields& declared) {
  try {
    scan_template(
        text, source, [](std::string_view) {},
        [&](std::string_view name, int line) {
          if (!known_placeholder(name, declared))
            throw std::invalid_argument(fmt::format(
                "{}:{}: unknown placeholder {{{{{}}}}} (see harness/drivers/README.md)", source, line, name));
        });
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

std::string case_tier_toml(const CaseEnv& env) {
  std::string out;
  if (!env.c->tier) return out;
  const auto& t = *env.c->tier;
  if (t.requests_per_minute) out += fmt::format("rpm = {}\n", *t.requests_per_minute);
  if (t.requests_per_day) out += fmt::format("rpd = {}\n", *t.requests_per_day);
  if (t.tokens_per_minute) out += fmt::format("tpm = {}\n", number(*t.tokens_per_minute));
  return out;
}

std::string case_groups_toml(const CaseEnv& env) {
  std::string out;
  for (const auto& [name, members] : env.c->groups)
    out += fmt::format("[groups.{}]\nroutes = {}\n", toml_string(name), string_array(members));
  return out;
}

std::string render_target_config(std::string_view text, const std::string& source, const CaseEnv& env,
                                 const std::string& api_key, Escape escape, const RouteFields& declared) {
  auto esc = [&](std::string_view s) { return escape == Escape::json ? json_escaped(s) : toml_escaped(s); };
  auto value_of = [&](std::string_view name) -> std::optional<std::string> {
    if (name == "policy") return case_policy_toml(env);
    if (name == "policy_json") return case_policy_json(env);
    if (name == "routes_json") return case_routes_json(env, false);
    if (name == "fallback_json") return case_routes_json(env, true);
    if (name == "case") return esc(env.c->name);
    if (name == "namespace") return esc(env.ns);
    if (name == "mock_base_url") return esc(env.mock_base_url);
    if (name == "time_scale") return number(env.time_scale);
    if (name == "key") return esc(api_key);
    if (name == "primary") return esc(env.c->policy.workflow.primary);
    if (name == "tier_limits") return case_tier_toml(env);
    if (name == "groups") return case_groups_toml(env);
    if (name.starts_with("workflow.")) return workflow_value(env, name.substr(9), escape);
    if (name.starts_with("route.")) {
      const bool optional = name.ends_with("?");
      const auto rest = name.substr(6, name.size() - 6 - (optional ? 1 : 0));
      const auto dot = rest.rfind('.');
      if (dot == std::string_view::npos) return std::nullopt;
      auto it = env.endpoints.find(std::string(rest.substr(0, dot)));
      if (it == env.endpoints.end()) return optional ? std::optional<std::string>("") : std::nullopt;
      const auto field = rest.substr(dot + 1);
      if (field == "base_url") return esc(it->second.base_url);
      if (field == "sdk_base_url") return esc(sdk_base_url(it->second));
      if (field == "dialect") return std::string(to_string(it->second.dialect));
      if (auto f = declared.find(std::string(field)); f != declared.end()) {
        auto v = f->second.find(std::string(to_string(it->second.dialect)));
        if (v == f->second.end())
          throw std::invalid_argument(
              fmt::format("{}: llmchaos.route_field.{} has no value for dialect {} (route {} of case \"{}\")",
                          source, field, to_string(it->second.dialect), it->first, env.c->name));
        return esc(v->second);
      }
    }
    return std::nullopt;
  };
  std::string out;
  scan_template(
      text, source, [&](std::string_view part) { out.append(part); },
      [&](std::string_view name, int line) {
        auto value = value_of(name);
        if (!value)  // a route this case does not have
          throw std::invalid_argument(
              fmt::format("{}:{}: placeholder {{{{{}}}}} has no value for case \"{}\" (routes: {})", source,
                          line, name, env.c->name, [&] {
                            std::string all;
                            for (const auto& [r, e] : env.endpoints) all += (all.empty() ? "" : ", ") + r;
                            return all;
                          }()));
        out += *value;
      });
  return out;
}

}  // namespace llmchaos::harness::driver_units
