// Rendering of --target-config templates (target_config.hpp).
#include "target_config.hpp"

#include <cmath>
#include <stdexcept>

#include <fmt/format.h>

#include "external.hpp"

namespace llmchaos::harness::driver_units {
namespace {

// A TOML basic string's content (the template writes the quotes).
std::string toml_escaped(std::string_view s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    if (ch == '\n') {
      out += "\\n";
      continue;
    }
    out += ch;
  }
  return out;
}

std::string quoted(std::string_view s) { return "\"" + toml_escaped(s) + "\""; }

std::string string_array(const std::vector<std::string>& items) {
  std::string out = "[";
  for (std::size_t i = 0; i < items.size(); ++i) out += (i ? ", " : "") + quoted(items[i]);
  return out + "]";
}

std::string number(double v) { return fmt::format("{}", v); }

}  // namespace

std::string case_policy_toml(const CaseEnv& env) {
  const auto& p = env.c->policy;
  const auto& w = p.workflow;
  std::string out = "[workflow]\n";
  out += fmt::format("name = {}\nprimary = {}\nfallback = {}\n", quoted(w.name), quoted(w.primary), string_array(w.fallback));
  out += fmt::format("max_total_attempts = {}\nmax_elapsed_ms = {}\nattempt_timeout_ms = {}\n", w.max_total_attempts,
                     number(w.max_elapsed_ms), number(w.attempt_timeout_ms));
  if (std::isfinite(w.max_extra_cost_usd)) out += fmt::format("max_extra_cost_usd = {}\n", number(w.max_extra_cost_usd));
  out += fmt::format("replay_safe = {}\nqueue_allowed = {}\ndegrade_allowed = {}\ndegrade_text = {}\n", w.replay_safe,
                     w.queue_allowed, w.degrade_allowed, quoted(w.degrade_text));
  if (!w.output_required.empty()) out += fmt::format("output_required = {}\n", string_array(w.output_required));
  out += fmt::format("\n[backoff]\nbase_ms = {}\ncap_ms = {}\n", number(p.backoff.base_ms), number(p.backoff.cap_ms));
  for (const auto& [name, endpoint] : env.endpoints) {
    const auto& r = p.route(name);
    out += fmt::format("\n[route.{}]\nbase_url = {}\ndialect = {}\n", quoted(name), quoted(endpoint.base_url),
                       quoted(to_string(endpoint.dialect)));
    out += fmt::format("expected_latency_ms = {}\ncost_per_attempt_usd = {}\napproved = {}\n", number(r.expected_latency_ms),
                       number(r.cost_per_attempt_usd), r.approved);
    const auto& b = r.breaker;
    out += fmt::format("breaker = {{ failure_threshold = {}, success_threshold = {}, open_ms = {}, half_open_max_probes = {} }}\n",
                       b.failure_threshold, b.success_threshold, number(b.open_ms), b.half_open_max_probes);
  }
  return out;
}

std::string render_target_config(std::string_view text, const std::string& source, const CaseEnv& env,
                                 const std::string& api_key) {
  auto value_of = [&](std::string_view name) -> std::optional<std::string> {
    if (name == "policy") return case_policy_toml(env);
    if (name == "case") return toml_escaped(env.c->name);
    if (name == "namespace") return toml_escaped(env.ns);
    if (name == "mock_base_url") return toml_escaped(env.mock_base_url);
    if (name == "time_scale") return number(env.time_scale);
    if (name == "key") return toml_escaped(api_key);
    if (name == "primary") return toml_escaped(env.c->policy.workflow.primary);
    if (name.starts_with("route.")) {
      const auto rest = name.substr(6);
      const auto dot = rest.rfind('.');
      if (dot == std::string_view::npos) return std::nullopt;
      auto it = env.endpoints.find(std::string(rest.substr(0, dot)));
      if (it == env.endpoints.end()) return std::nullopt;
      const auto field = rest.substr(dot + 1);
      if (field == "base_url") return toml_escaped(it->second.base_url);
      if (field == "sdk_base_url") return toml_escaped(sdk_base_url(it->second));
      if (field == "dialect") return std::string(to_string(it->second.dialect));
    }
    return std::nullopt;
  };
  std::string out;
  std::size_t at = 0;
  for (;;) {
    const auto open = text.find("{{", at);
    out.append(text.substr(at, open == std::string_view::npos ? std::string_view::npos : open - at));
    if (open == std::string_view::npos) break;
    const auto close = text.find("}}", open + 2);
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(open), '\n'));
    if (close == std::string_view::npos) throw std::invalid_argument(fmt::format("{}:{}: unclosed {{{{", source, line));
    const auto name = text.substr(open + 2, close - open - 2);
    auto value = value_of(name);
    if (!value)
      throw std::invalid_argument(fmt::format("{}:{}: unknown placeholder {{{{{}}}}} for case \"{}\" (see harness/drivers/README.md)",
                                              source, line, name, env.c->name));
    out += *value;
    at = close + 2;
  }
  return out;
}

}  // namespace llmchaos::harness::driver_units
