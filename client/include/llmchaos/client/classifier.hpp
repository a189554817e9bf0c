#pragma once
// Classifier: what one failed attempt looked like -> who owns the failure, the commit state, and the
// retry-after hint. Pure; decides by error detail, not by status alone.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmchaos/core/types.hpp"

namespace llmchaos::client {

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

struct Observation {
  Dialect dialect = Dialect::openai;
  int status = 0;    // 0 = no status line received
  std::string body;  // error body (or in-stream error event data)
  std::vector<std::pair<std::string, std::string>> headers;  // lower-cased names
  TransportEvent event = TransportEvent::none;
  int visible_tokens = 0;      // content tokens that reached the caller before the failure
  bool tool_committed = false; // a tool side effect was executed in this attempt
  bool replay_safe = false;    // from the workflow
  bool contract_violation = false;  // a 200 answer missing a required output field
};

struct Classification {
  Owner owner = Owner::none;  // none = not a failure
  CommitState commit = CommitState::none;
  std::optional<double> retry_after_ms;  // retry-after-ms, retry-after (s or HTTP date), Gemini RetryInfo
  std::string reason;                     // short human explanation ("429 insufficient_quota")
};

Classification classify(const Observation& obs);

}  // namespace llmchaos::client
