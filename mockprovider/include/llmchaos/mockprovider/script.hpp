#pragma once
// The fault script: per route, an ordered list of steps, each applied to the next attempt(s).
// The `[route.NAME]` table is shared with the policy (client) and case (harness) files, so the
// loader accepts extra keys that another layer owns (`extra_route_keys`).
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/core/types.hpp"

namespace toml {
inline namespace v3 {
class table;
}
}  // namespace toml

namespace llmchaos::mock {

// How a step's retry hint goes on the wire (`retry_after_form`; faults/README.md):
//   both       retry-after (whole seconds, rounded up) and retry-after-ms, and Gemini's RetryInfo (default)
//   seconds    retry-after alone, delay-seconds (fractional only where a time scale makes it so)
//   ms         retry-after-ms alone
//   http_date  retry-after as an HTTP-date (whole seconds, rounded up) with the response's date header
//   retry_info Gemini's RetryInfo.retryDelay in the body alone
//   anthropic_ratelimit  Anthropic's anthropic-ratelimit-{requests,tokens}-reset (RFC 3339) alone
//   none       no hint at all
//   amz_ms     x-amz-retry-after (ms) alone: the AWS SDKs' hint, a bedrock route's default
enum class RetryAfterForm { both, seconds, ms, http_date, retry_info, anthropic_ratelimit, none, amz_ms };

// One scripted step. Defaults are the fault kind's own when a field is absent.
struct Step {
  FaultKind fault = FaultKind::ok;
  int times = 1;             // consecutive attempts this step covers
  bool times_given = false;  // `times` was written: with until_ms, at most `times` attempts in the window
  std::optional<double> until_ms;   // time window: applies to attempts before this many ms after install
  double latency_ms = 0;            // before the first byte
  std::optional<std::string> text;  // the answer (canonical text); streamed one event per word
  double inter_event_ms = 0;
  std::optional<int> cut_after_events;  // stream faults: content events before the fault
  bool cut_mid_frame = false;      // stream_cut: the connection closes inside the next frame, not between two
  std::optional<double> stall_ms;  // stream_stall: silence before closing
  std::optional<double> first_token_ms;                    // slow_first_token
  std::optional<double> retry_after_ms;                    // rate_429 (and any step that wants the headers)
  RetryAfterForm retry_after_form = RetryAfterForm::both;  // how the hint is sent
  std::optional<std::string> model;          // model the answer reports (default: the request's)
  std::optional<double> hold_ms;             // post_commit_timeout / no_response hold (default 30000)
  std::optional<int> status;                 // status override
  std::optional<double> p50_ms, p95_ms;      // slow: lognormal latency from two quantiles
  std::optional<std::string> missing_field;  // schema_missing: the field left out of the JSON answer
  std::optional<std::string> body;  // rate_429 / quota_429 / payment_402: a named real body of the dialect
  SourcePos pos;                    // where the step was written (for error messages)
};

// A retry hint in this form is one the SDKs' convention reads (retry-after, retry-after-ms or Gemini's
// RetryInfo): not `none`, and not Anthropic's rate-limit reset headers alone.
inline bool readable_retry_hint(RetryAfterForm f) {
  return f != RetryAfterForm::none && f != RetryAfterForm::anthropic_ratelimit;
}
// The hint is sent as exact milliseconds (retry-after-ms, x-amz-retry-after), not rounded to seconds.
inline bool exact_ms_hint(RetryAfterForm f) {
  return f == RetryAfterForm::ms || f == RetryAfterForm::amz_ms;
}

struct RouteScript {
  std::string name;
  Dialect dialect = Dialect::openai;
  std::vector<Step> steps;
  FaultKind then = FaultKind::ok;  // what every attempt after the script gets
  std::string default_text = "hello from the mock provider";
  // `require_auth`: a request without a credential where the dialect reads one (DialectSpec::auth) is
  // the provider's own refusal (401; Gemini 403), ledgered with missing_credential, taking no step.
  // Absent: the server's default (`serve --require-auth`, off).
  std::optional<bool> require_auth;
  SourcePos pos;
};

struct Script {
  std::map<std::string, RouteScript> routes;
};

// Where a route stands in its script: the current step and the attempts it has taken.
struct StepCursor {
  std::size_t index = 0;
  int used = 0;
};

// The step of the next attempt, at `t_ms` after install: steps are taken in order; a step covers
// `times` attempts, or with until_ms every attempt (at most `times` when given) until its window ends.
// nullptr past the script's end (the route's `then`). The engine plays it; the harness replays it over a
// ledger (resolve_steps): one function, so both pick the same step.
inline const Step* next_step(const std::vector<Step>& steps, StepCursor& cur, double t_ms,
                             double time_scale) {
  while (cur.index < steps.size()) {
    const auto& s = steps[cur.index];
    const bool expired = s.until_ms && t_ms >= *s.until_ms * time_scale;
    const bool spent = (!s.until_ms || s.times_given) && cur.used >= s.times;
    if (expired || spent) {
      ++cur.index;
      cur.used = 0;
      continue;
    }
    ++cur.used;
    return &s;
  }
  return nullptr;
}

// Every key a step may carry (common_step_keys in fault.hpp plus each fault's own).
inline constexpr std::string_view step_keys[] = {"fault",
                                                 "times",
                                                 "until_ms",
                                                 "latency_ms",
                                                 "text",
                                                 "inter_event_ms",
                                                 "model",
                                                 "status",
                                                 "retry_after_ms",
                                                 "retry_after_form",
                                                 "cut_after_events",
                                                 "stall_ms",
                                                 "first_token_ms",
                                                 "hold_ms",
                                                 "p50_ms",
                                                 "p95_ms",
                                                 "missing_field",
                                                 "body",
                                                 "cut_mid_frame"};

// One step table (an element of `script`); `context` names it in messages ("route.a.script[0]").
Step step_from_toml(const toml::table& step_table, const std::string& file, const std::string& context);
// A route or namespace name usable as a URL path segment.
bool valid_name(std::string_view name);

// Keys of a `[route.NAME]` table that the script owns.
inline constexpr std::string_view route_script_keys[] = {"dialect", "script", "then", "text", "require_auth"};

// Parse `[route.*]` tables from a whole document. Unknown keys in a route table are errors unless
// listed in `extra_route_keys`; top-level keys other than `route` are errors unless `allow_other_tables`.
Script script_from_toml(const toml::table& doc, const std::string& file,
                        const std::vector<std::string_view>& extra_route_keys = {},
                        bool allow_other_tables = false);
// One route table.
RouteScript route_script_from_toml(const toml::table& route_table, const std::string& route_name,
                                   const std::string& file,
                                   const std::vector<std::string_view>& extra_route_keys = {});
Script load_script_file(const std::string& path);  // TOML file
Script parse_script_text(std::string_view text,
                         const std::string& source_name);  // TOML, or JSON if it starts with '{'

}  // namespace llmchaos::mock

namespace llmchaos {
template <>
struct enum_names<mock::RetryAfterForm> {
  using E = mock::RetryAfterForm;
  static constexpr std::pair<E, std::string_view> table[] = {{E::both, "both"},
                                                             {E::seconds, "seconds"},
                                                             {E::ms, "ms"},
                                                             {E::http_date, "http_date"},
                                                             {E::retry_info, "retry_info"},
                                                             {E::anthropic_ratelimit, "anthropic_ratelimit"},
                                                             {E::none, "none"},
                                                             {E::amz_ms, "amz_ms"}};
};
}  // namespace llmchaos
