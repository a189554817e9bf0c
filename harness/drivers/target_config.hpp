#pragma once
// The http driver's --target-config: a template rendered per case into the config file of the
// service under test (syntax in README.md beside this file).
#include <string>
#include <string_view>

#include "llmchaos/harness/driver.hpp"

namespace llmchaos::harness::driver_units {

// The case's policy as gateway.toml tables: [workflow], [backoff], and one [route.NAME] per route of
// the case with its base_url (inside the case's namespace), dialect and policy keys. Unscaled.
std::string case_policy_toml(const CaseEnv& env);

// "" when every {{placeholder}} of the template is one the renderer knows, else "file:line: ..." (the
// run's usage check, before any case).
std::string check_target_template(std::string_view text, const std::string& source);

// Replaces every {{placeholder}} of `text`; an unknown one is an error naming `source` and the line.
std::string render_target_config(std::string_view text, const std::string& source, const CaseEnv& env,
                                 const std::string& api_key);

}  // namespace llmchaos::harness::driver_units
