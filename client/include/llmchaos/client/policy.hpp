#pragma once
// The workflow policy: validated, immutable settings loaded from TOML ([workflow], [backoff],
// [route.NAME] policy keys, [route.NAME.breaker]).
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/client/limiter.hpp"
#include "llmchaos/core/spec_error.hpp"

namespace toml {
inline namespace v3 {
class table;
}
}  // namespace toml
namespace llmchaos {
class TomlReader;
}

namespace llmchaos::client {

struct BreakerSettings {
  int failure_threshold = 5;
  int success_threshold = 2;
  double open_ms = 30000;
  int half_open_max_probes = 1;
};

struct RoutePolicy {
  std::string name;
  double expected_latency_ms = 1000;  // judges whether a retry / fallback fits the time left
  double cost_per_attempt_usd = 0;
  bool approved = true;  // passed the equivalence contract (fallback candidates)
  // After a quota 429 / 402 the route is left alone this long, across requests (cooldown.hpp); 0: not.
  double quota_cooldown_ms = 0;
  // After a rate 429 with a readable Retry-After, the route is left alone until it passes, across requests.
  bool rate_cooldown = false;
  BreakerSettings breaker;
};

struct BackoffSettings {
  double base_ms = 200;
  double cap_ms = 4000;
};

struct WorkflowPolicy {
  std::string name = "workflow";
  std::string primary = "primary";
  int max_total_attempts = 3;
  double max_elapsed_ms = 30000;
  double max_extra_cost_usd = std::numeric_limits<double>::infinity();
  double attempt_timeout_ms = 10000;  // waiting for headers AND idle gaps inside a stream
  bool replay_safe = false;
  // Added: ask the provider for background responses (Responses API `background: true`): it stores
  // the response, so a cut stream can be resumed where it broke instead of replayed (SPEC 3 rule 0).
  // Only the routes whose dialect resumes (responses) use it; the others ignore it.
  bool background = false;
  std::vector<std::string> fallback;
  bool queue_allowed = false;
  bool degrade_allowed = false;
  std::string degrade_text = "default answer";
  std::vector<std::string> output_required;
};

struct Policy {
  WorkflowPolicy workflow;
  BackoffSettings backoff;
  std::map<std::string, RoutePolicy> routes;  // every route named in [route.*] or in primary/fallback
  const RoutePolicy& route(const std::string& name) const;  // defaults for an unlisted route
  Policy scaled(double time_scale) const;  // every time (budget, timeouts, latencies, backoff) x scale
};

// Keys of a `[route.NAME]` table that the policy owns.
inline constexpr std::string_view route_policy_keys[] = {
    "expected_latency_ms", "cost_per_attempt_usd", "approved",
    "quota_cooldown_ms",   "rate_cooldown",        "breaker"};

// Reads [workflow], [backoff] and the policy keys of [route.*]. Unknown keys in [workflow] /
// [backoff] / [route.X.breaker] are errors. Top-level keys other than workflow / backoff / route are
// allowed when `allow_other_keys` (a case file carries its own). A [route.X] key that is neither a
// policy key nor listed in `extra_route_keys` (pass mock::route_script_keys: the client does not link
// the mock) is an error when `extra_route_keys` is given or `!allow_other_keys`; with neither, the
// other route keys are left to the script loader, which reads the same tables.
// Checks: primary and every fallback name a [route.X] table when any is given (else they are created
// with defaults); fallback does not list the primary or a route twice; thresholds >= 1; times,
// costs >= 0; backoff cap_ms >= base_ms. Every error is SpecError "file:line:col: table.key: ...".
Policy policy_from_toml(const toml::table& doc, const std::string& file, bool allow_other_keys = true,
                        const std::vector<std::string_view>& extra_route_keys = {});
Policy load_policy_file(const std::string& path);  // a standalone policy file (strict)
// Added: a standalone policy file whose route tables may also carry `extra_route_keys`.
Policy load_policy_file(const std::string& path, const std::vector<std::string_view>& extra_route_keys);

// A tier's limits from the keys `rpm`, `rpd` (integers >= 1) and `tpm` (a number >= 1), each optional,
// of the table `r` reads (the gateway's [tiers.NAME], a case's [tier]); its other keys are the caller's.
RateLimits rate_limits_from_toml(TomlReader& r);

}  // namespace llmchaos::client
