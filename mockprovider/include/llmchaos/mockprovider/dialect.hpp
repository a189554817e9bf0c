#pragma once
// A dialect renders the wire format of one provider: it reads what the mock needs from a request and
// renders answers, stream frames and error bodies. It decides nothing about faults. One unit per dialect
// (src/openai.cpp, src/anthropic.cpp, src/gemini.cpp, src/responses.cpp, src/azure.cpp, src/bedrock.cpp),
// listed in one table
// (src/dialect.cpp); what other layers need of a dialect (id prefix, SDK base path, paths) is a field here,
// not a switch there.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/core/types.hpp"
#include "llmchaos/mockprovider/plan.hpp"

namespace boost::json {
class object;
}

namespace llmchaos::mock {

// What a frame of a dialect's stream is: each dialect's grammar says it (DialectSpec::frame_role); the
// proxy's stream edit (proxy/stream_edit.hpp) reads real and recorded streams by it.
enum class FrameRole {
  structure,  // no visible content, anywhere in the stream: role chunk, message_start, ping, block start/stop
  content,    // a visible content token or a tool call delta
  closing,    // ends the content: OpenAI's finish chunk and usage chunk, Anthropic's message_delta
  terminator,  // the end sentinel: [DONE], message_stop, Gemini's frame with finishReason
  injected,    // not part of a healthy answer: an error event, data that is not JSON
};

// What the mock needs to know about a provider request.
struct ChatRequest {
  bool stream = false;
  std::string model;                 // "" when the request names none
  bool include_usage = false;        // OpenAI stream_options.include_usage
  std::vector<std::string> tools;    // names of the tools offered, in order
  bool last_is_tool_result = false;  // the conversation ends with a tool result
  bool prefill = false;              // the last message is an assistant message (a prefill)
  int input_tokens = 0;              // a rough count (words of the request's text)
  // Gemini :streamGenerateContent without alt=sse: the stream is one JSON array of the same chunks
  // (what the real API sends REST users), not SSE frames.
  bool json_array_stream = false;
  // Responses API `background: true`: the provider stores the response (id resp_...) and keeps
  // generating it whatever happens to the stream; it can be re-read (Retrieve) and a cut stream resumed.
  bool background = false;
  // Which of the dialect's operations the request called, in the dialect's own numbering (0: its first
  // path); a dialect with several answer grammars (Bedrock's Converse and InvokeModel) renders by it.
  std::uint8_t operation = 0;
};

// A request for a stored response, not a completion: Responses API `GET /v1/responses/{id}`, with
// `?stream=true&starting_after=N` the resume of its stream from sequence N+1 (SPEC 3 rule 0).
struct Retrieve {
  std::string id;
  bool stream = false;
  std::int64_t starting_after = -1;  // -1: none given (the stream from its start)
};

enum class RequestError { none, not_found, method_not_allowed, malformed_json };

struct ParsedRequest {
  RequestError error = RequestError::none;
  std::string detail;        // for the error body
  bool models_list = false;  // OpenAI GET /v1/models: a static answer, not an attempt
  ChatRequest chat;
  std::optional<Retrieve> retrieve;  // a stored response is asked for (an attempt too)
};

// Every error body a fault (or a bad request) can ask a dialect for.
enum class ErrorKind {
  rate_limit,
  quota,
  payment,
  overloaded,
  server,
  server_context,
  bad_request,
  auth,
  policy,
  prefill,
  not_found,
  method_not_allowed,
  invalid_json,
  too_large,
  stream_interrupted,
  missing_key,  // the request carries no credential (a route with require_auth): the provider's own refusal
  // A 200 whose output the client cannot use (malformed_event): no dialect answers it as an error; it names
  // the dialect's own stop reasons for it, a malformed_event step's `body` (Bedrock's
  // malformed_model_output).
  malformed_output
};

// What an error body may name besides its kind.
struct ErrorContext {
  std::string_view detail;               // e.g. the unknown path, the JSON parser's message
  std::string_view request_id;           // Anthropic repeats it in the body
  std::optional<double> retry_after_ms;  // Gemini puts it in RetryInfo
  std::string_view body;  // a named real body of the provider (the step's `body`); "" = the default
};

struct ErrorReply {
  int status = 500;
  std::string body;  // JSON
  // Headers the provider sends with the error (Bedrock's x-amzn-ErrorType); most dialects have none.
  std::vector<std::pair<std::string, std::string>> headers = {};
};

enum class Finish { stop, content_filter, tool_call };

// A healthy (or policy-stopped) answer, ready to render.
struct Answer {
  std::string id;  // response id (e.g. "chatcmpl-7")
  std::string model;
  std::vector<std::string> tokens;  // joined they give the text exactly
  std::string tool_name;            // non-empty: the answer is a call of this tool
  std::string tool_call_id;
  Finish finish = Finish::stop;
  std::string stop_reason;  // a stop reason of the dialect's own a fault names (malformed_event's `body`)
  int input_tokens = 0;
  bool include_usage = false;  // OpenAI streams: the extra usage chunk
  bool background = false;     // a stored background response (Responses API)
  std::uint8_t operation = 0;  // the request's (ChatRequest::operation)
  std::string text() const;
  int output_tokens() const;
};

// A rendered stream, in the parts the fault kinds recombine.
struct StreamParts {
  std::vector<SseFrame> head;        // before any content (role chunk, message_start, ...)
  std::vector<SseFrame> content;     // one frame per token (or the tool call), content = true
  std::vector<SseFrame> tail;        // finish and usage frames
  std::vector<SseFrame> terminator;  // the end sentinel ([DONE], message_stop, Gemini's final frame)
};

// How a dialect frames a stream: SSE text (every frame's bytes are an SSE event), or the AWS binary
// event stream (Bedrock: eventstream.hpp messages, application/vnd.amazon.eventstream).
enum class StreamFraming { sse, aws_eventstream };

// How a provider's requests carry the API key (DialectSpec::auth).
struct Credential {
  std::string_view header;  // lower-case name
  std::string_view
      scheme;  // "Bearer": the value is "Bearer KEY" (the scheme in any case); "": the value is the key
};
struct AuthSpec {
  std::span<const Credential> headers;  // a non-empty key in any one of them authenticates the request
  std::string_view query_param;  // a query parameter that carries the key (Gemini's `key`), "" for none
};

struct DialectSpec {
  Dialect id;
  std::string_view request_id_header;    // the header the SDK reads the request id from
  std::string_view id_prefix;            // of the answers' ids ("chatcmpl-", "msg_", "resp-")
  std::string_view tool_call_id_prefix;  // of a tool call's id in an answer ("call_", Anthropic's "toolu_")
  std::string_view sdk_base_suffix;      // the SDK's base URL is the route's URL plus this ("/v1" for OpenAI)
  // The requests it serves below a route, "METHOD /path" ({model}: any model name); the first is the
  // completion request. For docs and tests: `parse` is the truth.
  std::span<const std::string_view> paths;
  ParsedRequest (*parse)(std::string_view method, std::string_view path, std::string_view body);
  std::string (*render_body)(const Answer& answer);
  StreamParts (*render_stream)(const Answer& answer);
  ErrorReply (*error)(ErrorKind kind, const ErrorContext& context);
  // The in-stream error event, sent after `sequence` frames of `answer`'s stream (a dialect whose
  // frames are numbered, or that repeat the response, reads them; the others ignore them).
  SseFrame (*stream_error_frame)(const Answer& answer, std::size_t sequence);
  SseFrame (*malformed_frame)();                       // an event whose data is not valid JSON
  std::string (*models_body)(std::string_view model);  // "" when the dialect has no model list
  // The named real bodies (a step's `body`) the dialect has for an error of this kind.
  std::vector<std::string_view> (*body_names)(ErrorKind kind);
  // Dialects that store responses (ParsedRequest::retrieve): the 404 of a retrieve of an id the mock
  // does not hold. nullptr for the others (they never parse a retrieve).
  ErrorReply (*unknown_response)(std::string_view id) = nullptr;
  // What a frame of this dialect's stream is, read from a real upstream's stream by `llmchaos proxy` and
  // from a recorded one by `serve --cassettes` (proxy/stream_edit.hpp): `frame_role` gets the
  // frame's SSE event name ("" when none) and its data, a JSON object without an `error` member (data
  // that is not a JSON object, or that carries `error`, is an injected frame in every dialect, and data
  // that is empty a structure frame); `done_data` is a data line that ends the stream by itself (the
  // Chat Completions grammar's "[DONE]"; "" when the dialect has none).
  FrameRole (*frame_role)(std::string_view event, const boost::json::object& data) = nullptr;
  std::string_view done_data = {};
  // Dialects that store responses: the id of the stored response an answer names, read from a plain
  // answer's body or from one frame of its stream ("" when it names none). `llmchaos proxy` and
  // `serve --cassettes` read it from a background create's real (or recorded) answer, so that a later
  // retrieve of that id is ledgered as its resume. nullptr for the others.
  std::string (*response_id)(std::string_view body_or_frame) = nullptr;
  // Where the provider reads the API key (provider-wire.md): what a route with `require_auth` checks
  // before any work, answering error(ErrorKind::missing_key) to a request that carries none.
  AuthSpec auth = {};
  // The provider stores background responses (Responses API `background: true`): the engine keeps a
  // create's answer for a later retrieve. Such a dialect also has `unknown_response` and `response_id`.
  bool stores_responses = false;
  // The provider can send the retry hint in its error body alone (Gemini's RetryInfo): only its routes
  // may script `retry_after_form = "retry_info"`.
  bool retry_hint_in_body = false;
  // How its streams are framed (the content type of a streamed answer follows from it).
  StreamFraming framing = StreamFraming::sse;
  // The retry hint's form when a step names none (faults/README.md): the AWS SDKs read
  // x-amz-retry-after alone.
  RetryAfterForm default_retry_after_form = RetryAfterForm::both;
  // A dialect whose in-stream errors are named (Bedrock's exception frames, by `:exception-type`): the
  // frame of the one a stream_error step's `body` names (body_names(ErrorKind::stream_interrupted)).
  // nullptr: such a dialect has no names, stream_error_frame is its one in-stream error.
  SseFrame (*named_stream_error_frame)(std::string_view body) = nullptr;
};

// The one table of dialects.
const DialectSpec& dialect_spec(Dialect d);
// Every dialect the table registers, in its order (what explore draws from).
std::vector<Dialect> registered_dialects();
// The request (lower-case header names, the target with its query) carries a non-empty key where the
// dialect reads one (DialectSpec::auth).
bool has_credential(const DialectSpec& dialect, std::span<const std::pair<std::string, std::string>> headers,
                    std::string_view target);
// The header carries a credential in some registered dialect (lower-case name): what a server must keep.
bool credential_header(std::string_view lower_case_name);
// The base URL an official SDK is given for a route served at `route_url` (dialect's sdk_base_suffix).
std::string sdk_base_url(std::string_view route_url, Dialect d);

// Splits text into one token per word: each token is a word with the whitespace after it (the first
// also keeps any leading whitespace), so joining the tokens gives back the text exactly.
std::vector<std::string> split_tokens(std::string_view text);
// A rough token count of a request body (its words).
int count_words(std::string_view text);

}  // namespace llmchaos::mock
