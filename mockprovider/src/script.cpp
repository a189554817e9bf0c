// The script loader: TOML (or JSON) -> validated Script, every error as file:line:col: message.
#include "llmchaos/mockprovider/script.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "llmchaos/core/toml_reader.hpp"
#include "llmchaos/mockprovider/fault.hpp"

namespace llmchaos::mock {
namespace {

bool contains(std::span<const std::string_view> keys, std::string_view key) {
  return std::find(std::begin(keys), std::end(keys), key) != std::end(keys);
}

std::string join(std::span<const std::string_view> keys) {
  std::string out;
  for (auto k : keys) out += (out.empty() ? "" : ", ") + std::string(k);
  return out;
}

std::optional<double> duration(TomlReader& r, std::string_view key) {
  auto v = r.opt_number(key);
  if (!v) return v;
  if (*v < 0) r.fail(key, fmt::format("must not be negative (got {})", *v));
  return v;
}

std::optional<int> count(TomlReader& r, std::string_view key, int min) {
  auto v = r.opt_int(key);
  if (!v) return std::nullopt;
  if (*v < min) r.fail(key, fmt::format("must be at least {} (got {})", min, *v));
  if (*v > 1'000'000'000) r.fail(key, fmt::format("is too large (got {})", *v));
  return static_cast<int>(*v);
}

FaultKind fault_kind(TomlReader& r, std::string_view key, const std::string& name) {
  auto kind = parse_enum<FaultKind>(name);
  if (!kind)
    r.fail(key, fmt::format("unknown fault \"{}\" (expected one of: {})", name, enum_choices<FaultKind>()));
  return *kind;
}

}  // namespace

bool valid_name(std::string_view name) {
  if (name.empty() || name.size() > 128 || name.substr(0, 2) == "__") return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' || c == '.';
  });
}

Step step_from_toml(const toml::table& t, const std::string& file, const std::string& context) {
  TomlReader r(t, file, context);
  Step s;
  s.pos = r.pos();
  auto name = r.opt_string("fault");
  if (!name) r.fail_here("missing required key \"fault\"");
  s.fault = fault_kind(r, "fault", *name);
  const auto& spec = fault_spec(s.fault);
  // A key meant for another fault is a mistake worth naming (cut_after_events on a rate_429, say).
  for (const auto& [key, node] : t) {
    const auto k = key.str();
    if (contains(step_keys, k) && !contains(common_step_keys, k) && !contains(spec.params, k)) {
      const auto own = spec.params.empty() ? std::string("none") : join(spec.params);
      r.fail(k, fmt::format("does not apply to fault \"{}\" (its own keys: {})", *name, own));
    }
  }
  if (auto v = count(r, "times", 1)) {
    s.times = *v;
    s.times_given = true;
  }
  s.until_ms = duration(r, "until_ms");
  s.latency_ms = duration(r, "latency_ms").value_or(0);
  s.text = r.opt_string("text");
  s.inter_event_ms = duration(r, "inter_event_ms").value_or(0);
  s.model = r.opt_string("model");
  if (s.model && s.model->empty()) r.fail("model", "must not be empty");
  if (auto v = r.opt_int("status")) {
    if (*v < 100 || *v > 599)
      r.fail("status", fmt::format("must be an HTTP status from 100 to 599 (got {})", *v));
    s.status = static_cast<int>(*v);
  }
  s.retry_after_ms = duration(r, "retry_after_ms");
  s.retry_after_form = r.opt_enum<RetryAfterForm>("retry_after_form").value_or(RetryAfterForm::both);
  s.cut_after_events = count(r, "cut_after_events", 0);
  s.cut_mid_frame = r.opt_bool("cut_mid_frame").value_or(false);
  s.stall_ms = duration(r, "stall_ms");
  s.first_token_ms = duration(r, "first_token_ms");
  s.hold_ms = duration(r, "hold_ms");
  s.p50_ms = duration(r, "p50_ms");
  s.p95_ms = duration(r, "p95_ms");
  if (s.p95_ms && !s.p50_ms) r.fail("p95_ms", "needs p50_ms");
  if (s.p95_ms && *s.p95_ms < *s.p50_ms)
    r.fail("p95_ms", fmt::format("must not be below p50_ms ({} < {})", *s.p95_ms, *s.p50_ms));
  s.missing_field = r.opt_string("missing_field");
  if (s.missing_field && s.missing_field->empty()) r.fail("missing_field", "must not be empty");
  s.body = r.opt_string("body");
  r.reject_unknown_keys();
  return s;
}

RouteScript route_script_from_toml(const toml::table& t, const std::string& route_name,
                                   const std::string& file,
                                   const std::vector<std::string_view>& extra_route_keys) {
  const std::string context = "route." + route_name;
  TomlReader r(t, file, context);
  if (!valid_name(route_name))
    r.fail_here("a route name must be 1-128 letters, digits, '-', '_' or '.' and must not start with \"__\"");
  RouteScript rs;
  rs.name = route_name;
  rs.pos = r.pos();
  rs.dialect = r.opt_enum<Dialect>("dialect").value_or(Dialect::openai);
  if (auto text = r.opt_string("text")) rs.default_text = *text;
  if (auto then = r.opt_string("then")) rs.then = fault_kind(r, "then", *then);
  rs.require_auth = r.opt_bool("require_auth");
  // Every step on its own, and the route's unknown keys too: lint reports every broken one.
  std::vector<SpecError> errors;
  const toml::array* script = nullptr;
  collect_errors(errors, [&] { script = r.opt_array("script"); });
  if (script) {
    std::size_t i = 0;
    for (const auto& element : *script) {
      const auto where = fmt::format("{}.script[{}]", context, i++);
      collect_errors(errors, [&] {
        const auto* step = element.as_table();
        if (!step)
          throw SpecError(pos_of(element, file), where + ": expected a table such as { fault = \"ok\" }");
        rs.steps.push_back(step_from_toml(*step, file, where));
        if (!step->get("retry_after_form"))  // the provider's own form (Bedrock: x-amz-retry-after)
          rs.steps.back().retry_after_form = dialect_spec(rs.dialect).default_retry_after_form;
        if (const auto& body = rs.steps.back().body) {
          const auto names = dialect_spec(rs.dialect).body_names(fault_error_kind(rs.steps.back().fault));
          if (std::find(names.begin(), names.end(), *body) == names.end())
            throw SpecError(
                pos_of(*step->get("body"), file),
                fmt::format("{}.body: {} has no {} body \"{}\" (its bodies: {})", where,
                            to_string(rs.dialect), to_string(rs.steps.back().fault), *body,
                            names.empty() ? std::string("none") : fmt::format("{}", fmt::join(names, ", "))));
        }
        if (rs.steps.back().retry_after_form == RetryAfterForm::retry_info &&
            !dialect_spec(rs.dialect).retry_hint_in_body)
          throw SpecError(
              pos_of(*step->get("retry_after_form"), file),
              fmt::format(
                  "{}.retry_after_form: \"retry_info\" is Gemini's body hint; this route's dialect is {}",
                  where, to_string(rs.dialect)));
      });
    }
  }
  for (auto key : extra_route_keys) r.allow(key);
  collect_errors(errors, [&] { r.reject_unknown_keys(); });
  throw_errors(std::move(errors));
  return rs;
}

Script script_from_toml(const toml::table& doc, const std::string& file,
                        const std::vector<std::string_view>& extra_route_keys, bool allow_other_tables) {
  TomlReader r(doc, file);
  const auto* routes = r.opt_table("route");
  if (!routes) r.fail_here("no routes: add a [route.NAME] table with a dialect and a script");
  Script script;
  std::vector<SpecError> errors;
  for (const auto& [name, node] : *routes) {
    collect_errors(errors, [&, &name = name,
                            &node = node] {  // init-captures: clang 14 cannot capture a binding
      const auto* table = node.as_table();
      if (!table) throw SpecError(pos_of(node, file), fmt::format("route.{}: expected a table", name.str()));
      script.routes.emplace(std::string(name.str()),
                            route_script_from_toml(*table, std::string(name.str()), file, extra_route_keys));
    });
  }
  if (allow_other_tables)
    for (const auto& [key, node] : doc) r.allow(key.str());
  collect_errors(errors, [&] { r.reject_unknown_keys(); });
  throw_errors(std::move(errors));
  return script;
}

Script load_script_file(const std::string& path) {
  return script_from_toml(parse_toml_file(path), path);
}

Script parse_script_text(std::string_view text, const std::string& source_name) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{')
    return script_from_toml(json_to_toml(text, source_name), source_name);
  return script_from_toml(parse_toml(text, source_name), source_name);
}

}  // namespace llmchaos::mock
