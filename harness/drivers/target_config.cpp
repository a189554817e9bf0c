// Rendering of --target-config templates (target_config.hpp).
#include "target_config.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
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

namespace {

// Calls `on_placeholder(name, line)` for each {{name}} and `on_text` for the text between; throws
// std::invalid_argument naming the line of an unclosed {{.
template <class Text, class Placeholder>
void scan_template(std::string_view text, const std::string& source, Text on_text, Placeholder on_placeholder) {
  std::size_t at = 0;
  for (;;) {
    const auto open = text.find("{{", at);
    on_text(text.substr(at, open == std::string_view::npos ? std::string_view::npos : open - at));
    if (open == std::string_view::npos) return;
    const int line = 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(open), '\n'));
    const auto close = text.find("}}", open + 2);
    if (close == std::string_view::npos) throw std::invalid_argument(fmt::format("{}:{}: unclosed {{{{", source, line));
    on_placeholder(text.substr(open + 2, close - open - 2), line);
    at = close + 2;
  }
}

constexpr std::string_view case_placeholders[] = {"policy", "case", "namespace", "mock_base_url", "time_scale", "key", "primary"};
constexpr std::string_view route_fields[] = {"base_url", "sdk_base_url", "dialect"};

}  // namespace

std::string check_target_template(std::string_view text, const std::string& source) {
  try {
    scan_template(text, source, [](std::string_view) {}, [&](std::string_view name, int line) {
      bool known = std::find(std::begin(case_placeholders), std::end(case_placeholders), name) != std::end(case_placeholders);
      if (name.starts_with("route.")) {
        const auto dot = name.rfind('.');
        known = dot > 6 && std::find(std::begin(route_fields), std::end(route_fields), name.substr(dot + 1)) != std::end(route_fields);
      }
      if (!known)
        throw std::invalid_argument(fmt::format("{}:{}: unknown placeholder {{{{{}}}}} (see harness/drivers/README.md)", source, line, name));
    });
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
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
  scan_template(text, source, [&](std::string_view part) { out.append(part); }, [&](std::string_view name, int line) {
    auto value = value_of(name);
    if (!value)  // a route this case does not have
      throw std::invalid_argument(fmt::format("{}:{}: placeholder {{{{{}}}}} has no value for case \"{}\" (routes: {})", source,
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
