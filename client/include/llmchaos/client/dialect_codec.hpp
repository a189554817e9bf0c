#pragma once
// What each provider dialect looks like from the client side: the request (path, headers, body, as the
// official SDKs send it) and the meaning of an answer (a non-stream JSON body, or one SSE event of a
// stream). One codec per dialect (client/src/codec_<dialect>.cpp), listed in one table (codec_for).
// Pure: no I/O. To add a dialect: a Dialect enum value, one codec file, one table row. What a dialect
// does differently from the SSE + JSON-body common case is a trait of its codec (framing, error types),
// which the reader and the classifier consult: never a test of the dialect's name.
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmchaos/client/sse.hpp"
#include "llmchaos/client/transport.hpp"
#include "llmchaos/core/eventstream.hpp"
#include "llmchaos/core/types.hpp"

namespace llmchaos::client {

// What an answer said: a whole non-stream body, or accumulated over a stream's events.
struct Answer {
  std::string text;  // visible content
  bool tool_call = false;
  std::string tool_name;
  std::string tool_call_id;
  std::string tool_arguments;  // JSON text (accumulated from deltas in streams)
  std::string finish_reason;
  std::string model;
  int input_tokens = 0;
  int output_tokens = 0;
  // Dialects whose streams can be resumed (responses): the response's id once a frame named it, the
  // sequence_number of the last frame read, and whether it is a stored background response.
  std::string response_id;
  long long last_sequence = -1;
  bool background = false;
  // Added: an in-stream error's type where the dialect names it outside the payload (an AWS exception
  // frame's :exception-type); the classifier reads it through the codec's ErrorTraits.
  std::string error_type;
};

enum class EventKind {
  ignored,    // metadata or keep-alive (usage, role, ping); the answer may still have been updated
  content,    // a visible content token (EventResult::token)
  error,      // an in-stream error event
  malformed,  // data that should be JSON and is not
};

struct EventResult {
  EventKind kind = EventKind::ignored;
  std::string token;
  bool end = false;  // the dialect's end of stream: [DONE], message_stop, Gemini's frame with finishReason
};

using Headers = std::vector<std::pair<std::string, std::string>>;

// How a 2xx stream's body is framed: SSE text events (on_event), or the AWS event stream's binary
// messages (core/eventstream.hpp, on_frame).
enum class StreamFraming { sse, eventstream };

// An error type a dialect names in a header or a stream frame, and its owner (SPEC section 2).
struct ErrorTypeOwner {
  std::string_view name;  // compared ignoring ASCII case: a header says Throttling..., a frame throttling...
  Owner owner;            // before a stream; Owner::none: the status and body decide, as for any dialect
  Owner in_stream;        // as an in-stream error (no status to go by)
  std::string_view why;   // for the reason text
  // Set: the entry applies only when the error's message contains this (lower case); the first entry
  // that applies wins.
  std::string_view message_has = {};
};

// Dialects whose errors are typed outside the JSON body (Amazon Bedrock: `x-amzn-ErrorType`).
struct ErrorTraits {
  std::string_view type_header;            // lower case; its value may go on after a ':' (a namespace)
  std::string_view retry_after_ms_header;  // a retry hint in milliseconds, read before retry-after
  std::span<const ErrorTypeOwner> types;
  // Stop reasons of a complete answer that are failures all the same (Bedrock's malformed_model_output).
  std::span<const ErrorTypeOwner> failing_finishes;
};

struct DialectCodec {
  Dialect dialect;
  // Request target below the route's base URL, with the query ("/v1/chat/completions").
  std::string (*target)(const AttemptRequest& req);
  // Dialect headers (auth, version). Content-type, Idempotency-Key and Host are added by the transport.
  Headers (*headers)(const std::string& api_key);
  std::string (*request_body)(const AttemptRequest& req);
  // A 2xx non-stream body. False when it is not the dialect's JSON answer (the transport reports a
  // malformed answer).
  bool (*parse_answer)(std::string_view body, Answer& out);
  // One SSE event: updates `acc`, says what the event was.
  EventResult (*on_event)(const SseEvent& event, Answer& acc);
  // Added (defaults suit the SSE dialects): the stream framing, and its reader when not SSE.
  StreamFraming framing = StreamFraming::sse;
  EventResult (*on_frame)(const eventstream::Message& frame, Answer& acc) = nullptr;
  // Headers that depend on the attempt (an SDK's invocation id and attempt count); nullptr: none.
  Headers (*attempt_headers)(const AttemptRequest& req, const std::string& api_key) = nullptr;
  // Errors typed outside the body; nullptr: the status and body say everything.
  const ErrorTraits* errors = nullptr;
  // The answer names no model (Bedrock Converse): the model is the one the request named.
  bool model_from_request = false;
};

const DialectCodec& codec_for(Dialect dialect);
// The reference client speaks the dialect (it has a codec): what drives the client (explore, the soak
// generator) draws only these, so the mock may serve a dialect before the client reads it.
bool has_codec(Dialect dialect);
// The dialect's headers for one attempt (codec.headers, then codec.attempt_headers): what both the live
// and the virtual-time transport put on the wire.
Headers request_headers(const AttemptRequest& req, const std::string& api_key);

// The tool every tool-call workflow offers the model: it records the label (the side effect).
inline constexpr std::string_view workflow_tool_name = "record_label";

}  // namespace llmchaos::client
