#pragma once
// What each provider dialect looks like from the client side: the request (path, headers, body, as the
// official SDKs send it) and the meaning of an answer (a non-stream JSON body, or one SSE event of a
// stream). One codec per dialect (client/src/codec_<dialect>.cpp), listed in one table (codec_for).
// Pure: no I/O. To add a dialect: a Dialect enum value, one codec file, one table row.
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmchaos/client/sse.hpp"
#include "llmchaos/client/transport.hpp"
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
};

const DialectCodec& codec_for(Dialect dialect);
// The reference client speaks the dialect (it has a codec): what drives the client (explore, the soak
// generator) draws only these, so the mock may serve a dialect before the client reads it.
bool has_codec(Dialect dialect);

// The tool every tool-call workflow offers the model: it records the label (the side effect).
inline constexpr std::string_view workflow_tool_name = "record_label";

}  // namespace llmchaos::client
