#pragma once
// The vocabulary every part shares: dialects, fault kinds, owners, actions, commit states, outcomes.
// Each enum has one name table; to_string / parse_enum are generated from it.
#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace llmchaos {

enum class Dialect { openai, anthropic, gemini, responses, azure, bedrock };

enum class FaultKind {
  ok,
  rate_429,
  quota_429,
  payment_402,
  overloaded,
  server_500,
  server_500_context,
  bad_request,
  auth,
  policy,
  stream_cut,
  stream_error,
  stream_stall,
  slow_first_token,
  malformed_event,
  no_terminator,
  post_commit_timeout,
  no_response,
  connect_reset,
  slow,
  schema_missing,
  prefill_rejected
};

// Who owns a failure (SPEC 2): decides which actions are even thinkable.
enum class Owner { none, transient, rate, quota, request, auth, policy, unknown, contract };

// The one action taken at a failure point (SPEC 3).
// resume (SPEC 3 rule 0): continue a cut background response through the provider's resume protocol.
enum class Action { none, retry, fallback, queue, degrade, fail_closed, resume };

enum class CommitState { none, committed, unknown };

// The metric split of SPEC 3: never merged into one success rate.
enum class Outcome { primary_success, retry_recovery, fallback_recovery, degraded, queued, fail_closed };

// How the mock saw one attempt end (ledger `outcome`).
enum class AttemptOutcome { completed, cut, held_then_closed, reset, client_closed };

// The protocol an attempt came over (ledger `protocol`): none when no wire was involved (virtual time).
enum class WireProtocol : std::uint8_t { none, http1, h2 };

template <class E>
struct enum_names;  // specialised below: static constexpr std::array<std::pair<E, std::string_view>, N> table

#define LLMCHAOS_ENUM_NAMES(E, ...)                                          \
  template <>                                                                \
  struct enum_names<E> {                                                     \
    static constexpr std::pair<E, std::string_view> table[] = {__VA_ARGS__}; \
  };

LLMCHAOS_ENUM_NAMES(Dialect, {Dialect::openai, "openai"}, {Dialect::anthropic, "anthropic"},
                    {Dialect::gemini, "gemini"}, {Dialect::responses, "responses"}, {Dialect::azure, "azure"},
                    {Dialect::bedrock, "bedrock"})
LLMCHAOS_ENUM_NAMES(
    FaultKind, {FaultKind::ok, "ok"}, {FaultKind::rate_429, "rate_429"}, {FaultKind::quota_429, "quota_429"},
    {FaultKind::payment_402, "payment_402"}, {FaultKind::overloaded, "overloaded"},
    {FaultKind::server_500, "server_500"}, {FaultKind::server_500_context, "server_500_context"},
    {FaultKind::bad_request, "bad_request"}, {FaultKind::auth, "auth"}, {FaultKind::policy, "policy"},
    {FaultKind::stream_cut, "stream_cut"}, {FaultKind::stream_error, "stream_error"},
    {FaultKind::stream_stall, "stream_stall"}, {FaultKind::slow_first_token, "slow_first_token"},
    {FaultKind::malformed_event, "malformed_event"}, {FaultKind::no_terminator, "no_terminator"},
    {FaultKind::post_commit_timeout, "post_commit_timeout"}, {FaultKind::no_response, "no_response"},
    {FaultKind::connect_reset, "connect_reset"}, {FaultKind::slow, "slow"},
    {FaultKind::schema_missing, "schema_missing"}, {FaultKind::prefill_rejected, "prefill_rejected"})
LLMCHAOS_ENUM_NAMES(Owner, {Owner::none, "none"}, {Owner::transient, "transient"}, {Owner::rate, "rate"},
                    {Owner::quota, "quota"}, {Owner::request, "request"}, {Owner::auth, "auth"},
                    {Owner::policy, "policy"}, {Owner::unknown, "unknown"}, {Owner::contract, "contract"})
LLMCHAOS_ENUM_NAMES(Action, {Action::none, "none"}, {Action::retry, "retry"}, {Action::fallback, "fallback"},
                    {Action::queue, "queue"}, {Action::degrade, "degrade"},
                    {Action::fail_closed, "fail_closed"}, {Action::resume, "resume"})
LLMCHAOS_ENUM_NAMES(CommitState, {CommitState::none, "none"}, {CommitState::committed, "committed"},
                    {CommitState::unknown, "unknown"})
LLMCHAOS_ENUM_NAMES(Outcome, {Outcome::primary_success, "primary_success"},
                    {Outcome::retry_recovery, "retry_recovery"},
                    {Outcome::fallback_recovery, "fallback_recovery"}, {Outcome::degraded, "degraded"},
                    {Outcome::queued, "queued"}, {Outcome::fail_closed, "fail_closed"})
LLMCHAOS_ENUM_NAMES(AttemptOutcome, {AttemptOutcome::completed, "completed"}, {AttemptOutcome::cut, "cut"},
                    {AttemptOutcome::held_then_closed, "held_then_closed"}, {AttemptOutcome::reset, "reset"},
                    {AttemptOutcome::client_closed, "client_closed"})
LLMCHAOS_ENUM_NAMES(WireProtocol, {WireProtocol::none, "none"}, {WireProtocol::http1, "http/1.1"},
                    {WireProtocol::h2, "h2"})
#undef LLMCHAOS_ENUM_NAMES

template <class E>
constexpr std::string_view to_string(E value) {
  for (const auto& [v, name] : enum_names<E>::table)
    if (v == value) return name;
  return "?";
}

template <class E>
constexpr std::optional<E> parse_enum(std::string_view name) {
  for (const auto& [v, n] : enum_names<E>::table)
    if (n == name) return v;
  return std::nullopt;
}

// "a, b, c": the accepted names, for error messages.
template <class E>
std::string enum_choices() {
  std::string out;
  for (const auto& [v, n] : enum_names<E>::table) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

}  // namespace llmchaos
