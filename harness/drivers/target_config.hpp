#pragma once
// The http driver's --target-config: a template rendered per case into the config file of the
// service under test (syntax in README.md beside this file).
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/harness/driver.hpp"

namespace llmchaos::harness::driver_units {

// The case's policy as gateway.toml tables: [workflow], [backoff], and one [route.NAME] per route of
// the case with its base_url (inside the case's namespace), dialect and policy keys. Unscaled.
std::string case_policy_toml(const CaseEnv& env);

// The case's policy as one JSON object ({{policy_json}}): {"workflow": {...}, "backoff": {...},
// "routes": {{routes_json}}}; its routes as a JSON array of {"name", "base_url", "sdk_base_url",
// "dialect", "expected_latency_ms", "cost_per_attempt_usd", "approved"}, primary first, then the
// fallbacks in order, then the others ({{routes_json}}); the fallbacks alone ({{fallback_json}}).
std::string case_policy_json(const CaseEnv& env);
std::string case_routes_json(const CaseEnv& env, bool fallbacks_only);

// The case's [tier] as the keys of a gateway [tiers.NAME] table ({{tier_limits}}): "rpm = N", "rpd = N",
// "tpm = N" lines, one per limit the case sets; "" without a [tier] (no limits).
std::string case_tier_toml(const CaseEnv& env);

// The case's [groups] as gateway [groups.NAME] tables ({{groups}}): "[groups.NAME]" and "routes = [...]"
// lines per group; "" without groups. ({{policy}} carries each group's policy keys as a [route.NAME]
// without base_url, the gateway's form of a group's settings.)
std::string case_groups_toml(const CaseEnv& env);

// Route fields a template declares (`llmchaos.route_field.NAME = DIALECT: VALUE, ...`): NAME -> the
// value per dialect name, rendered as {{route.ROUTE.NAME}} from the route's dialect (a gateway's own
// name for a provider, the path its base URL takes).
using RouteFields = std::map<std::string, std::map<std::string, std::string>>;

// "" when every {{placeholder}} of the template is one the renderer knows (the built-in ones and the
// declared route fields), else "file:line: ..." (the run's usage check, before any case).
std::string check_target_template(std::string_view text, const std::string& source,
                                  const RouteFields& declared = {});

// How a string placeholder is escaped: a TOML basic string's content (a config file), or a JSON
// string's (a header, a .json config). Neither writes the quotes.
enum class Escape { toml, json };

// Replaces every {{placeholder}} of `text`; an unknown one is an error naming `source` and the line,
// as is a declared route field with no value for the route's dialect.
std::string render_target_config(std::string_view text, const std::string& source, const CaseEnv& env,
                                 const std::string& api_key, Escape escape = Escape::toml,
                                 const RouteFields& declared = {});

// Whether the template uses {{time_scale}} (so the target's timers follow --time-scale).
bool uses_placeholder(std::string_view text, std::string_view name);

// What a template declares about its target, in lines `llmchaos.KEY = VALUE` (after an optional
// comment marker `#`, `//` or `;`, so the rendered file stays valid): `capabilities` (a list, or
// none), `time_scale` (false: the target's timers cannot be scaled), `drain` (a path or none),
// `header` (NAME: TEMPLATE, repeatable), `route_field.NAME` (DIALECT: VALUE, ...). An unknown key, an
// unknown dialect or a field that shadows a built-in one is an error naming the line.
struct TargetDeclarations {
  std::optional<std::string> capabilities;
  std::optional<bool> time_scale;
  std::optional<std::string> drain;
  std::vector<std::string> headers;
  RouteFields route_fields;
};
TargetDeclarations read_target_declarations(std::string_view text, const std::string& source);

// One --target-header "NAME: TEMPLATE": the name and the template; throws std::invalid_argument.
std::pair<std::string, std::string> split_header(std::string_view spec);

}  // namespace llmchaos::harness::driver_units
