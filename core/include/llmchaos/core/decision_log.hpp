#pragma once
// The client stack's half of a case's history, as plain data (the mock's half is the ledger): what each
// attempt of a request looked like and what the stack decided at each failure point. The executor writes
// it; the checker judges it; reports print it. Here in core, not in client/, so that the result data
// (results/) and the reports read it without linking the client stack. The namespace stays the client's:
// it is the client's vocabulary, wherever it is compiled.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmchaos/core/types.hpp"

namespace llmchaos::client {

// Which layer spent an attempt (kept apart so a report can say what each layer really did).
enum class AttemptKind { initial, retry, fallback, redelivery };

// What the transport saw, beyond status and body.
enum class TransportEvent {
  none,                   // a complete HTTP response (status + body, or a complete stream)
  connect_failed,         // never connected: nothing sent
  reset_before_response,  // connection reset / closed before any response byte
  timeout_no_byte,        // request sent, attempt timeout passed, no byte back
  stream_closed,          // stream ended mid-body (TCP close, no terminator)
  stream_idle_timeout,    // stream went silent longer than the attempt timeout
  stream_error_event,     // an in-stream error event (body = its data)
  malformed_event,        // an event that is not valid JSON
  missing_terminator,     // stream ended cleanly at the HTTP level without the dialect's sentinel
};

struct AttemptRecord {
  int index = 0;  // global attempt index (0-based)
  std::string route;
  int route_attempt = 0;                    // index on that route within this request
  AttemptKind kind = AttemptKind::initial;  // which layer spent it (a tool follow-up counts as initial)
  double start_ms = 0, end_ms = 0;          // relative to the request's start
  int status = 0;
  TransportEvent event = TransportEvent::none;
  Owner owner = Owner::none;  // none = success
  CommitState commit = CommitState::none;
  int events = 0;
  int visible_tokens = 0;
  std::string reason;      // classifier reason or transport error
  bool tool_call = false;  // the answer was a tool call (its side effect ran next)
};

struct FailurePoint {
  int point = 0;      // 1-based
  int attempt = 0;    // index of the failed attempt; -1 when none was sent (breaker open, budget spent)
  std::string route;  // route of the failed attempt
  Action action = Action::fail_closed;
  int rule = 0;
  std::string rule_text;
  std::string inputs;
  std::string next_route;  // retry / fallback target
  double wait_ms = 0;      // sleep before the next attempt (retry-after or backoff)
};

struct DecisionLog {
  std::string operation_id;
  int delivery = 1;  // 1 = execute(); 2.. = queue redeliveries of the same operation
  std::vector<AttemptRecord> attempts;
  std::vector<FailurePoint> failures;
  Outcome outcome = Outcome::fail_closed;
  bool answered = false;  // the caller got an answer (model or degraded)
  std::string text;       // the answer given to the caller
  std::string route;      // route that served the answer
  std::string model;      // model reported by that route
  int input_tokens = 0, output_tokens = 0;
  double elapsed_ms = 0;
  double extra_cost_usd = 0;  // cost of every attempt after the first
  std::vector<std::string>
      journal;  // attempt journal lines (JSON), requested -> started -> committed -> acknowledged
  // Set when a tier limit in front of the stack refused the request, so the stack never ran it (no
  // attempt, no failure point, not answered): the binding limit ("requests_per_minute", ...).
  std::string limited_by;
  // Set when the stack failed closed while every route of the workflow was cooling (cooldown.hpp): the
  // wait until the soonest is free. A caller's answer carries it as its Retry-After (the gateway's 429).
  std::optional<double> retry_after_ms;
};

}  // namespace llmchaos::client

namespace llmchaos {
template <>
struct enum_names<client::AttemptKind> {
  using E = client::AttemptKind;
  static constexpr std::pair<E, std::string_view> table[] = {
      {E::initial, "initial"}, {E::retry, "retry"}, {E::fallback, "fallback"}, {E::redelivery, "redelivery"}};
};
template <>
struct enum_names<client::TransportEvent> {
  using E = client::TransportEvent;
  static constexpr std::pair<E, std::string_view> table[] = {
      {E::none, "none"},
      {E::connect_failed, "connect_failed"},
      {E::reset_before_response, "reset_before_response"},
      {E::timeout_no_byte, "timeout_no_byte"},
      {E::stream_closed, "stream_closed"},
      {E::stream_idle_timeout, "stream_idle_timeout"},
      {E::stream_error_event, "stream_error_event"},
      {E::malformed_event, "malformed_event"},
      {E::missing_terminator, "missing_terminator"}};
};
}  // namespace llmchaos
