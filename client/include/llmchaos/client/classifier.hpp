#pragma once
// Classifier: what one failed attempt looked like -> who owns the failure, the commit state, and the
// retry-after hint. Pure; decides by error detail, not by status alone.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmchaos/core/decision_log.hpp"  // TransportEvent
#include "llmchaos/core/inline_text.hpp"
#include "llmchaos/core/types.hpp"

namespace llmchaos::client {

struct Observation {
  Dialect dialect = Dialect::openai;
  int status = 0;                                            // 0 = no status line received
  std::string body;                                          // error body (or in-stream error event data)
  std::vector<std::pair<std::string, std::string>> headers;  // lower-cased names
  TransportEvent event = TransportEvent::none;
  int visible_tokens = 0;           // content tokens that reached the caller before the failure
  bool tool_committed = false;      // a tool side effect was executed in this attempt
  bool replay_safe = false;         // from the workflow
  bool contract_violation = false;  // a 200 answer missing a required output field
  // Added: the dialect's finish / stop reason of a complete answer ("content_filter", "refusal",
  // "SAFETY"...); a content-filter finish is a policy refusal even on a 200.
  std::string finish_reason;
  // Added: wall time (Unix ms) when the response arrived, used for an HTTP-date retry-after only when
  // the response carries no `date` header; 0 = unknown (an HTTP-date retry-after is then ignored).
  double now_unix_ms = 0;
  // Added: an in-stream error's type named outside its payload (AttemptResult::error_type); read with
  // the dialect codec's ErrorTraits, as is the type header of an error before a stream.
  std::string error_type;
};

// A classification's reason: held inline, so classifying allocates nothing (bench/decide); a longer
// one is cut and ends in "...".
using ReasonText = InlineText<256>;

struct Classification {
  Owner owner = Owner::none;  // none = not a failure
  CommitState commit = CommitState::none;
  std::optional<double> retry_after_ms;  // retry-after-ms, retry-after (s or HTTP date), Gemini RetryInfo
  ReasonText reason;                     // short human explanation ("429 insufficient_quota")
};

Classification classify(const Observation& obs);
// Added: the same into an existing Classification, reusing its string's capacity (hot loops: a
// gateway, bench/decide). `out` is fully overwritten.
void classify_into(const Observation& obs, Classification& out);

// The rules, by detail (pinned by tests/client/test_classifier.cpp):
// - transport: reset before any response byte / connect failed -> transient, commit none; a timeout with
//   no byte back after the request was sent (or no status at all) -> transient, commit unknown (rule 2:
//   fail_closed), commit none when the workflow is replay_safe (rules 4-7: a retry when the budget
//   allows); a stream closed / idle / in-stream error event / malformed event -> transient, commit none
//   (headers arrived: the server answered, nothing visible was lost).
// - any failure after a visible token reached the caller or a tool side effect ran -> commit committed.
// - 401 / 403, and a 400 whose detail says the API key is invalid -> auth.
// - content-policy refusals (OpenAI content_policy_violation / content_filter, Anthropic and Gemini
//   "content filtering policy" / SAFETY / blocked wording, a content-filter finish on a 200) -> policy.
// - 402, billing wording (insufficient_quota and OpenAI's billing codes, Anthropic billing_error or
//   "credit balance") -> quota, whatever the status.
// - 429: rate unless the detail says quota. Gemini writes "You exceeded your current quota" on every
//   429, even per-minute ones, so its structured details decide first: a quotaId naming PerDay, or
//   "limit: 0" (no quota at all on the tier) -> quota; a quotaId naming PerMinute / PerSecond, or a
//   RetryInfo -> rate. Then OpenAI's rate_limit_exceeded / type requests|tokens -> rate; then quota
//   wording ("current quota", "usage quota", "monthly", "spend limit", "billing"...) -> quota; else rate
//   (Anthropic rate_limit_error, a bare RESOURCE_EXHAUSTED).
// - 500 whose message names the input (context length, too long, too many tokens) -> request;
//   any other 500 -> unknown (the server may have done the work); 501 -> request.
// - 502 / 503 / 504 / 529 (and 408 / 409) -> transient; other 4xx -> request; other 5xx -> unknown.
// - 200 with a contract violation -> contract.

// Retry-after, shared by the classifier and anyone reading headers (one parser, not two):
// `retry-after-ms` (float ms) wins, then `retry-after` (seconds, or an HTTP date measured against the
// response's `date` header, else `now_unix_ms`). Past or negative values clamp to 0.
std::optional<double> retry_after_from_headers(
    const std::vector<std::pair<std::string, std::string>>& headers, double now_unix_ms = 0);
// IMF-fixdate ("Sun, 06 Nov 1994 08:49:37 GMT") or RFC 850 ("Sunday, 06-Nov-94 08:49:37 GMT") -> Unix ms.
std::optional<double> parse_http_date_unix_ms(std::string_view text);
// A protobuf Duration in JSON ("26s", "0.5s", "1.250s") -> ms (Gemini RetryInfo.retryDelay).
std::optional<double> parse_proto_duration_ms(std::string_view text);

}  // namespace llmchaos::client
