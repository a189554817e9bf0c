// Amazon Bedrock runtime (provider-wire.md section 8): POST /model/{modelId}/converse and
// /converse-stream (the Converse grammar), /invoke and /invoke-with-response-stream (the model's native
// body: Anthropic Messages, through the anthropic unit). Streams are AWS event-stream messages
// (core eventstream.hpp); errors before a stream are {"message": ...} with the exception's name in
// x-amzn-ErrorType, in a stream `:message-type: exception` frames named by `:exception-type`.
#include <array>

#include "dialect_util.hpp"
#include "llmchaos/core/base64.hpp"
#include "llmchaos/core/eventstream.hpp"

namespace llmchaos::mock {

extern const DialectSpec anthropic_dialect;  // InvokeModel's native body (anthropic.* models)

namespace {
using namespace detail;

// ChatRequest::operation: the order of served_paths.
enum Operation : std::uint8_t { converse, converse_stream, invoke, invoke_stream };
constexpr std::string_view operation_names[] = {"converse", "converse-stream", "invoke",
                                                "invoke-with-response-stream"};

// The SDKs percent-encode the model id in the path (`anthropic.claude-3-haiku-20240307-v1%3A0`, an ARN's
// slashes as %2F): the ledger and the answer name it decoded, as the service does.
std::string percent_decoded(std::string_view s) {
  const auto hex = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::string out;
  out.reserve(s.size());
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && hex(s[i + 1]) >= 0 && hex(s[i + 2]) >= 0) {
      out += static_cast<char>(hex(s[i + 1]) * 16 + hex(s[i + 2]));
      i += 2;
    } else {
      out += s[i];
    }
  }
  return out;
}

// Converse's messages: the last one's role, and whether it carries a toolResult block.
void read_converse(const json::object& o, ChatRequest& c) {
  if (const auto* config = object_member(o, "toolConfig"))
    if (const auto* tools = array_member(*config, "tools"))
      for (const auto& t : *tools)
        if (t.is_object())
          if (const auto* spec = object_member(t.get_object(), "toolSpec"))
            c.tools.push_back(str_member(*spec, "name"));
  if (const auto* msgs = array_member(o, "messages")) {
    c.input_tokens = words_in(*msgs);
    if (!msgs->empty() && msgs->back().is_object()) {
      const auto& last = msgs->back().get_object();
      c.prefill = str_member(last, "role") == "assistant";
      if (const auto* content = array_member(last, "content"))
        for (const auto& block : *content)
          if (block.is_object() && block.get_object().contains("toolResult")) c.last_is_tool_result = true;
    }
  }
  if (const auto* sys = o.if_contains("system")) c.input_tokens += words_in(*sys);
}

ParsedRequest parse(std::string_view method, std::string_view target, std::string_view body) {
  ParsedRequest out;
  const auto path = path_only(target);
  constexpr std::string_view prefix = "/model/";
  const auto slash = path.rfind('/');
  const bool under_model = path.substr(0, prefix.size()) == prefix && slash > prefix.size();
  const auto verb = under_model ? path.substr(slash + 1) : std::string_view{};
  std::size_t op = std::size(operation_names);
  for (std::size_t i = 0; i < std::size(operation_names); ++i)
    if (verb == operation_names[i]) op = i;
  if (!accept_post(out, method, path, op < std::size(operation_names))) return out;
  const auto operation = static_cast<Operation>(op);
  if (operation == invoke || operation == invoke_stream) {
    out = anthropic_dialect.parse(method, "/v1/messages", body);  // the model's native body
  } else {
    json::value storage;
    if (const auto* o = read_request(body, storage, out, false)) read_converse(*o, out.chat);
  }
  out.chat.model = percent_decoded(path.substr(prefix.size(), slash - prefix.size()));
  out.chat.stream = operation == converse_stream || operation == invoke_stream;  // by the path alone
  out.chat.operation = operation;
  return out;
}

bool invoked(const Answer& a) {
  return a.operation == invoke || a.operation == invoke_stream;
}

std::string_view stop_reason(const Answer& a) {
  if (!a.stop_reason.empty()) return a.stop_reason;
  switch (a.finish) {
    case Finish::content_filter:
      return "content_filtered";
    case Finish::tool_call:
      return "tool_use";
    default:
      return "end_turn";
  }
}

json::object usage(const Answer& a) {
  return {{"inputTokens", a.input_tokens},
          {"outputTokens", a.output_tokens()},
          {"totalTokens", a.input_tokens + a.output_tokens()}};
}

json::object tool_use(const Answer& a) {
  return {{"toolUseId", a.tool_call_id}, {"name", a.tool_name}, {"input", json::object{}}};
}

std::string render_body(const Answer& a) {
  if (invoked(a)) return anthropic_dialect.render_body(a);
  json::array content;
  if (a.tool_name.empty())
    content.push_back(json::object{{"text", a.text()}});
  else
    content.push_back(json::object{{"toolUse", tool_use(a)}});
  json::object body{
      {"output",
       json::object{{"message", json::object{{"role", "assistant"}, {"content", std::move(content)}}}}},
      {"stopReason", stop_reason(a)},
      {"usage", usage(a)},
      {"metrics", json::object{{"latencyMs", 100}}}};
  return json::serialize(body);
}

SseFrame event_frame(std::string_view type, const json::object& payload, bool content = false) {
  return {eventstream::encode(eventstream::event(type, json::serialize(payload))), content};
}

// ConverseStream: messageStart, (contentBlockStart for a tool call), one contentBlockDelta per token,
// contentBlockStop, then messageStop and metadata (the service sends usage after the stop).
StreamParts converse_stream_parts(const Answer& a) {
  StreamParts p;
  p.head.push_back(event_frame("messageStart", {{"role", "assistant"}}));
  const auto delta = [](json::object d) {
    return json::object{{"contentBlockIndex", 0}, {"delta", std::move(d)}};
  };
  if (a.tool_name.empty()) {
    for (const auto& t : a.tokens)
      p.content.push_back(event_frame("contentBlockDelta", delta({{"text", t}}), true));
  } else {
    json::object start{{"toolUseId", a.tool_call_id}, {"name", a.tool_name}};
    p.head.push_back(
        event_frame("contentBlockStart",
                    {{"contentBlockIndex", 0}, {"start", json::object{{"toolUse", std::move(start)}}}}));
    p.content.push_back(
        event_frame("contentBlockDelta", delta({{"toolUse", json::object{{"input", "{}"}}}}), true));
  }
  p.tail.push_back(event_frame("contentBlockStop", {{"contentBlockIndex", 0}}));
  p.terminator.push_back(event_frame("messageStop", {{"stopReason", stop_reason(a)}}));
  p.terminator.push_back(
      event_frame("metadata", {{"usage", usage(a)}, {"metrics", json::object{{"latencyMs", 100}}}}));
  return p;
}

// One Anthropic SSE frame as InvokeModelWithResponseStream carries it: a `chunk` event whose payload is
// {"bytes": base64 of the event's JSON}. The service adds its invocation metrics to message_stop.
SseFrame chunk_frame(const SseFrame& sse, const Answer& a) {
  std::string_view data = sse.bytes;
  data.remove_prefix(std::min(data.size(), data.find("data: ") + 6));
  while (!data.empty() && data.back() == '\n') data.remove_suffix(1);
  std::string event(data);
  if (event.find(R"("type":"message_stop")") != std::string::npos) {
    auto o = json::parse(event).as_object();
    o["amazon-bedrock-invocationMetrics"] = json::object{{"inputTokenCount", a.input_tokens},
                                                         {"outputTokenCount", a.output_tokens()},
                                                         {"invocationLatency", 100},
                                                         {"firstByteLatency", 50}};
    event = json::serialize(o);
  }
  return event_frame("chunk", {{"bytes", base64::encode(event)}}, sse.content);
}

StreamParts invoke_stream_parts(const Answer& a) {
  auto native = anthropic_dialect.render_stream(a);
  StreamParts p;
  const auto convert = [&a](std::vector<SseFrame>& from, std::vector<SseFrame>& to) {
    for (const auto& f : from)
      if (f.bytes.find("event: ping\n") != 0) to.push_back(chunk_frame(f, a));  // Bedrock sends no ping
  };
  convert(native.head, p.head);
  convert(native.content, p.content);
  convert(native.tail, p.tail);
  convert(native.terminator, p.terminator);
  return p;
}

StreamParts render_stream(const Answer& a) {
  return invoked(a) ? invoke_stream_parts(a) : converse_stream_parts(a);
}

// An exception: its name in a stream (lower camel case) and before one, its status and message.
struct Exception {
  std::string_view stream_name, type;
  int status;
  std::string_view message;
};

// The exceptions a stream can carry (ConverseStreamOutput's and ResponseStream's members), a
// stream_error step's `body`; the first is the default (provider-wire.md section 8).
constexpr Exception stream_exceptions[] = {
    {"serviceUnavailableException", "ServiceUnavailableException", 503,
     "Bedrock is unable to process your request."},
    {"throttlingException", "ThrottlingException", 429,
     "Too many requests, please wait before trying again."},
    {"modelStreamErrorException", "ModelStreamErrorException", 424,
     "The model returned an error while streaming the response."},
    {"internalServerException", "InternalServerException", 500,
     "The server encountered an internal error while processing the request."},
    {"validationException", "ValidationException", 400, "Input is too long for requested model."},
};

const Exception* stream_exception(std::string_view name) {
  for (const auto& e : stream_exceptions)
    if (e.stream_name == name) return &e;
  return nullptr;
}

// Named real bodies (a step's `body`) beside the in-stream exceptions: ModelNotReadyException is a 429
// the SDKs retry like a throttle; ModelTimeoutException a 408 (the model took too long), transient.
struct NamedException {
  ErrorKind kind;
  std::string_view name;
  Exception exception;
};
constexpr NamedException named_exceptions[] = {
    {ErrorKind::rate_limit,
     "model_not_ready",
     {"", "ModelNotReadyException", 429, "Model is not ready to serve inference requests. Please retry."}},
    {ErrorKind::overloaded,
     "model_timeout",
     {"", "ModelTimeoutException", 408,
      "Model has timed out in processing the request. Try your request again."}},
};

Exception exception_of(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::rate_limit:
      return stream_exceptions[1];
    case ErrorKind::quota:
      return {"", "ServiceQuotaExceededException", 400,
              "Your request exceeded the service quota for your account. You can view your quotas in the "
              "Service Quotas console."};
    // Bedrock bills through the AWS account: a lapsed payment method is refused as access denied.
    case ErrorKind::payment:
      return {"", "AccessDeniedException", 403,
              "INVALID_PAYMENT_INSTRUMENT:A valid payment instrument must be provided."};
    case ErrorKind::overloaded:
    case ErrorKind::stream_interrupted:
      return stream_exceptions[0];
    case ErrorKind::server:
    case ErrorKind::malformed_output:  // never an error answer (dialect.hpp)
      return stream_exceptions[3];
    case ErrorKind::server_context:
      return {"", "InternalServerException", 500,
              "The server encountered an internal error while processing the input: the prompt is too long "
              "for the model's context window."};
    case ErrorKind::bad_request:
      return stream_exceptions[4];
    case ErrorKind::auth:
      return {"", "AccessDeniedException", 403,
              "You don't have access to the model with the specified model ID."};
    case ErrorKind::policy:
      return {"", "ValidationException", 400, "Output blocked by content filtering policy."};
    case ErrorKind::prefill:
      return {"", "ValidationException", 400,
              "This model does not support assistant message prefill. The conversation must end with a user "
              "message."};
    case ErrorKind::not_found:
      return {"", "UnknownOperationException", 404, "Unknown operation"};
    case ErrorKind::method_not_allowed:
      return {"", "UnknownOperationException", 405, "Method not allowed"};
    case ErrorKind::invalid_json:
      return {"", "ValidationException", 400,
              "Malformed input request, please reformat your input and try again."};
    case ErrorKind::too_large:
      return {"", "ValidationException", 413, "Input is too long for requested model."};
    // No Authorization header: 403 AccessDeniedException {"Message":"Authorization header is missing"}
    // (karthink/gptel#1397, anthropics/claude-code#45000); error() writes its capital M.
    case ErrorKind::missing_key:
      return {"", "AccessDeniedException", 403, "Authorization header is missing"};
  }
  return stream_exceptions[3];
}

Exception exception_of(ErrorKind kind, std::string_view body) {
  if (kind == ErrorKind::stream_interrupted)
    if (const auto* e = stream_exception(body)) return *e;
  if (const auto* n = find_named(named_exceptions, kind, body)) return n->exception;
  return exception_of(kind);
}

// A malformed_event step's `body`: the stop reasons that say the output cannot be used (a whole 200).
constexpr std::string_view malformed_stops[] = {"malformed_model_output", "malformed_tool_use"};

std::vector<std::string_view> body_names(ErrorKind kind) {
  if (kind == ErrorKind::malformed_output) return {std::begin(malformed_stops), std::end(malformed_stops)};
  if (kind != ErrorKind::stream_interrupted) return named_for(named_exceptions, kind);
  std::vector<std::string_view> names;
  for (const auto& e : stream_exceptions) names.push_back(e.stream_name);
  return names;
}

// The service's type header carries its Coral namespace after a colon (the SDKs keep what is before it).
ErrorReply error(ErrorKind kind, const ErrorContext& ctx) {
  const auto e = exception_of(kind, ctx.body);
  std::string message(e.message);
  if (!ctx.detail.empty()) message += std::string(" (") + std::string(ctx.detail) + ")";
  json::object body{{kind == ErrorKind::missing_key ? "Message" : "message", message}};
  const auto coral = kind == ErrorKind::missing_key ? "com.amazon.coral.service" : "com.amazon.bedrock";
  ErrorReply reply{e.status, json::serialize(body)};
  reply.headers.emplace_back("x-amzn-errortype",
                             fmt::format("{}:http://internal.amazon.com/coral/{}/", e.type, coral));
  return reply;
}

SseFrame exception_frame(const Exception& e) {
  json::object payload{{"message", e.message}};
  if (e.stream_name == "modelStreamErrorException") {  // the model's own status, as the service adds it
    payload["originalStatusCode"] = 500;
    payload["originalMessage"] = "Internal server error";
  }
  return {eventstream::encode(eventstream::exception(e.stream_name, json::serialize(payload))), false};
}

SseFrame stream_error_frame(const Answer&, std::size_t) {
  return exception_frame(stream_exceptions[0]);
}

SseFrame named_stream_error_frame(std::string_view body) {
  const auto* e = stream_exception(body);
  return exception_frame(e ? *e : stream_exceptions[0]);
}

// A contentBlockDelta whose message CRC is wrong (its last byte flipped): the SDKs' decoders refuse it
// as a checksum mismatch before reading the payload.
SseFrame malformed_frame() {
  auto bytes = eventstream::encode(
      eventstream::event("contentBlockDelta", R"({"contentBlockIndex":0,"delta":{"text":""}})"));
  bytes.back() = static_cast<char>(bytes.back() ^ 0x5a);
  return {std::move(bytes), false};
}

std::string models_body(std::string_view) {
  return {};
}

// The event types of both grammars: Converse's, and InvokeModelWithResponseStream's `chunk`, whose
// role is that of the Anthropic event it carries (base64 JSON in `bytes`).
FrameRole frame_role(std::string_view event, const json::object& data) {
  if (event == "chunk") {
    const auto* bytes = data.if_contains("bytes");
    const auto native = bytes && bytes->is_string() ? base64::decode(bytes->get_string()) : std::nullopt;
    boost::system::error_code ec;
    const auto v = native ? json::parse(*native, ec) : json::value();
    if (ec || !v.is_object()) return FrameRole::injected;
    const auto* type = v.get_object().if_contains("type");
    const auto name = type && type->is_string() ? std::string_view(type->get_string()) : std::string_view();
    return anthropic_dialect.frame_role(name, v.get_object());
  }
  if (event == "contentBlockDelta") return FrameRole::content;
  if (event == "messageStop" || event == "metadata") return FrameRole::terminator;  // metadata comes last
  if (event == "contentBlockStop") return FrameRole::closing;
  return FrameRole::structure;
}

constexpr std::string_view served_paths[] = {
    "POST /model/{model}/converse", "POST /model/{model}/converse-stream", "POST /model/{model}/invoke",
    "POST /model/{model}/invoke-with-response-stream"};
// SigV4 (`AWS4-HMAC-SHA256 Credential=.../bedrock/aws4_request, SignedHeaders=..., Signature=...`: the
// scheme and a value, never verified) or a Bedrock API key (`Bearer`, AWS_BEARER_TOKEN_BEDROCK).
constexpr Credential credentials[] = {{"authorization", "AWS4-HMAC-SHA256"}, {"authorization", "Bearer"}};
}  // namespace

extern const DialectSpec bedrock_dialect = {
    .id = Dialect::bedrock,
    .request_id_header = "x-amzn-requestid",
    .id_prefix = "msg_bdrk_",
    .tool_call_id_prefix = "tooluse_",
    .sdk_base_suffix = "",
    .paths = served_paths,
    .parse = parse,
    .render_body = render_body,
    .render_stream = render_stream,
    .error = error,
    .stream_error_frame = stream_error_frame,
    .malformed_frame = malformed_frame,
    .models_body = models_body,
    .body_names = body_names,
    .frame_role = frame_role,
    .auth = {credentials, ""},
    .framing = StreamFraming::aws_eventstream,
    .default_retry_after_form = RetryAfterForm::amz_ms,
    .named_stream_error_frame = named_stream_error_frame,
};

}  // namespace llmchaos::mock
