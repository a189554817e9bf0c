#pragma once
// How the executor reaches a route: one attempt in, what was seen out. The live implementation is a
// Beast HTTP/1.1 + SSE client (http_transport.hpp); the virtual one plays mock plans under a virtual
// clock (issue: virtual time). Policy code only sees this interface.
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmchaos/client/classifier.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/core/types.hpp"

namespace llmchaos::client {

struct Endpoint {
  std::string route;
  Dialect dialect = Dialect::openai;
  std::string base_url;  // "http://127.0.0.1:PORT/ns/route" (dialect paths are appended)
};

// The second leg of a tool workflow: the tool call the model asked for and the result of executing it,
// sent back so the model can answer.
struct ToolTurn {
  std::string call_id;
  std::string name;
  std::string arguments = "{}";  // JSON text
  std::string result = "ok";
};

// Where a cut background response goes on (SPEC 3 rule 0): its id and the last sequence number seen.
struct ResumePoint {
  std::string response_id;
  long long last_sequence = -1;
};

struct AttemptRequest {
  Endpoint endpoint;
  bool stream = false;
  std::string model = "mock-model";
  std::string prompt = "classify this";
  bool tool_call = false;     // ask for a tool call; the executor runs it against the side-effect endpoint
  bool prefill = false;       // last message is an assistant prefill
  std::string operation_id;   // sent as Idempotency-Key
  int attempt_number = 0;     // global attempt index in the workflow (0-based)
  double timeout_ms = 10000;  // headers AND idle gaps inside a stream
  std::optional<ToolTurn> tool_turn;  // set on the follow-up call after a tool side effect
  bool background = false;            // ask for a stored background response (dialects that resume)
  // Set: this attempt resumes a cut background response (a GET with no body, the codec's target)
  // instead of asking again.
  std::optional<ResumePoint> resume;
  // Added: the workflow's max_total_attempts (0: not known), for dialects whose SDKs send the attempt
  // count (Bedrock's amz-sdk-request: attempt=N; max=M).
  int max_attempts = 0;
};

// The HTTP method of an attempt: a resume reads the stored response, anything else asks for an answer.
inline const char* attempt_method(const AttemptRequest& req) {
  return req.resume ? "GET" : "POST";
}

struct AttemptResult {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // lower-cased names
  std::string body;  // non-stream body or the error body / error event data
  TransportEvent event = TransportEvent::none;
  std::string text;        // content received (visible tokens joined as sent)
  int content_events = 0;  // visible content events received
  int events = 0;          // all SSE events received
  bool tool_call = false;  // the answer asked for a tool call
  std::string tool_name;
  std::string tool_call_id;    // the provider's id of the call (echoed in the follow-up)
  std::string tool_arguments;  // JSON text
  std::string finish_reason;   // as the dialect spells it ("stop", "end_turn", "STOP", "content_filter")
  bool terminated = false;     // streams: the dialect's end was seen ([DONE], message_stop, finishReason)
  std::string model;           // the model the answer reports
  int input_tokens = 0, output_tokens = 0;
  double started_ms = 0, ended_ms = 0;  // on the executor's clock
  std::string error;                    // transport error text ("connect: refused"), empty when fine
  // A stored background response (dialects that resume): its id and the last sequence number
  // received; resumable once both are known ("" / -1 otherwise).
  std::string response_id;
  long long last_sequence = -1;
  // Added: an in-stream error's type where the dialect names it outside the payload (an AWS exception
  // frame's :exception-type); "" otherwise.
  std::string error_type;
};

class Transport {
 public:
  virtual ~Transport() = default;
  // Runs one attempt to its end. `on_token` is called for every visible content token as it arrives
  // (the commit point).
  virtual AttemptResult send(const AttemptRequest& req, Clock& clock,
                             const std::function<void(std::string_view token)>& on_token) = 0;
  // Execute a tool side effect (recorded by the mock with the operation id). Returns false on failure.
  virtual bool side_effect(const Endpoint& endpoint, const std::string& operation_id,
                           const std::string& tool) = 0;
};

}  // namespace llmchaos::client
