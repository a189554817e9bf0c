// Anthropic Messages: POST /v1/messages (plain and SSE with an `event:` line on every frame),
// {"type":"error","error":{type,message},"request_id"} bodies, 529 overloaded_error
// (provider-wire.md section 2).
#include "dialect_util.hpp"

namespace llmchaos::mock {
namespace {
using namespace detail;

ParsedRequest parse(std::string_view method, std::string_view target, std::string_view body) {
  ParsedRequest out;
  const auto path = path_only(target);
  if (!accept_post(out, method, path, path == "/v1/messages" || path == "/messages")) return out;
  json::value storage;
  const auto* o = read_request(body, storage, out);
  if (!o) return out;
  auto& c = out.chat;
  if (const auto* tools = array_member(*o, "tools"))
    for (const auto& t : *tools)
      if (t.is_object()) c.tools.push_back(str_member(t.get_object(), "name"));
  if (const auto* msgs = array_member(*o, "messages")) {
    c.input_tokens = words_in(*msgs);
    if (!msgs->empty() && msgs->back().is_object()) {
      const auto& last = msgs->back().get_object();
      const auto role = str_member(last, "role");
      c.prefill = role == "assistant";
      if (const auto* content = array_member(last, "content"))
        for (const auto& block : *content)
          if (block.is_object() && str_member(block.get_object(), "type") == "tool_result")
            c.last_is_tool_result = true;
    }
  }
  if (auto* sys = o->if_contains("system")) c.input_tokens += words_in(*sys);
  return out;
}

std::string_view stop_reason(const Answer& a) {
  switch (a.finish) {
    case Finish::content_filter:
      return "refusal";
    case Finish::tool_call:
      return "tool_use";
    default:
      return "end_turn";
  }
}

json::object tool_block(const Answer& a) {
  return {{"type", "tool_use"}, {"id", a.tool_call_id}, {"name", a.tool_name}, {"input", json::object{}}};
}

std::string render_body(const Answer& a) {
  json::array content;
  if (a.tool_name.empty()) {
    content.push_back(json::object{{"type", "text"}, {"text", a.text()}});
  } else {
    content.push_back(tool_block(a));
  }
  json::object body{
      {"id", a.id},
      {"type", "message"},
      {"role", "assistant"},
      {"model", a.model},
      {"content", std::move(content)},
      {"stop_reason", stop_reason(a)},
      {"stop_sequence", nullptr},
      {"usage", json::object{{"input_tokens", a.input_tokens}, {"output_tokens", a.output_tokens()}}}};
  return json::serialize(body);
}

StreamParts render_stream(const Answer& a) {
  StreamParts p;
  json::object message{{"id", a.id},
                       {"type", "message"},
                       {"role", "assistant"},
                       {"model", a.model},
                       {"content", json::array{}},
                       {"stop_reason", nullptr},
                       {"stop_sequence", nullptr},
                       {"usage", json::object{{"input_tokens", a.input_tokens}, {"output_tokens", 1}}}};
  p.head.push_back(
      sse_event("message_start", json::object{{"type", "message_start"}, {"message", std::move(message)}}));
  json::object block = a.tool_name.empty() ? json::object{{"type", "text"}, {"text", ""}} : tool_block(a);
  p.head.push_back(sse_event(
      "content_block_start",
      json::object{{"type", "content_block_start"}, {"index", 0}, {"content_block", std::move(block)}}));
  p.head.push_back(sse_event("ping", json::object{{"type", "ping"}}));
  const auto delta = [](json::object d) {
    return json::object{{"type", "content_block_delta"}, {"index", 0}, {"delta", std::move(d)}};
  };
  if (a.tool_name.empty()) {
    for (const auto& t : a.tokens)
      p.content.push_back(
          sse_event("content_block_delta", delta({{"type", "text_delta"}, {"text", t}}), true));
  } else {
    p.content.push_back(sse_event("content_block_delta",
                                  delta({{"type", "input_json_delta"}, {"partial_json", "{}"}}), true));
  }
  p.tail.push_back(
      sse_event("content_block_stop", json::object{{"type", "content_block_stop"}, {"index", 0}}));
  // message_delta must carry usage: the SDK reads usage.output_tokens unconditionally.
  p.tail.push_back(sse_event(
      "message_delta",
      json::object{{"type", "message_delta"},
                   {"delta", json::object{{"stop_reason", stop_reason(a)}, {"stop_sequence", nullptr}}},
                   {"usage", json::object{{"output_tokens", a.output_tokens()}}}}));
  p.terminator.push_back(sse_event("message_stop", json::object{{"type", "message_stop"}}));
  return p;
}

struct Shape {
  int status;
  std::string_view type, message;
};

Shape shape(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::rate_limit:
      return {429, "rate_limit_error",
              "Number of requests has exceeded your per-minute rate limit "
              "(https://docs.claude.com/en/api/rate-limits); see the response headers for current usage. "
              "Please try "
              "again later."};
    case ErrorKind::quota:
      return {429, "rate_limit_error",
              "Your organization has exceeded its monthly usage quota for this API; requests are refused "
              "until the "
              "limit is raised in Plans & Billing."};
    case ErrorKind::payment:
      return {402, "billing_error",
              "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to "
              "upgrade "
              "or purchase credits."};
    case ErrorKind::overloaded:
    case ErrorKind::stream_interrupted:
      return {529, "overloaded_error", "Overloaded"};
    case ErrorKind::server:
    case ErrorKind::malformed_output:  // never an error answer (dialect.hpp)
      return {500, "api_error", "Internal server error"};
    case ErrorKind::server_context:
      return {500, "api_error",
              "Internal server error while processing the input: prompt is too long for the context window"};
    case ErrorKind::bad_request:
      return {400, "invalid_request_error", "prompt is too long: 208719 tokens > 200000 maximum"};
    case ErrorKind::auth:
      return {401, "authentication_error", "invalid x-api-key"};
    case ErrorKind::policy:
      return {400, "invalid_request_error", "Output blocked by content filtering policy"};
    case ErrorKind::prefill:
      return {400, "invalid_request_error",
              "This model does not support assistant message prefill. The conversation must end with a user "
              "message."};
    case ErrorKind::not_found:
      return {404, "not_found_error", "Not found"};
    case ErrorKind::method_not_allowed:
      return {405, "invalid_request_error", "Method not allowed"};
    case ErrorKind::invalid_json:
      return {400, "invalid_request_error",
              "There was an issue with the format or content of your request: invalid JSON"};
    case ErrorKind::too_large:
      return {413, "request_too_large", "Request exceeds the maximum allowed number of bytes."};
    // No key: 401 {"type":"error","error":{"type":"authentication_error","message":"x-api-key header is
    // required"},"request_id":"req_..."} (n8n-io/n8n#37930, karthink/gptel#354).
    case ErrorKind::missing_key:
      return {401, "authentication_error", "x-api-key header is required"};
  }
  return {500, "api_error", "error"};
}

// Named real bodies (a step's `body`): the credit-balance refusal Anthropic sends as a 400
// invalid_request_error, the 402 billing_error, and the console spend limit, also a 400
// invalid_request_error (provider-wire.md, Anthropic errors; anthropics/claude-code#2127, #38035).
struct NamedShape {
  ErrorKind kind;
  std::string_view name;
  Shape shape;
};
constexpr std::string_view credit_too_low =
    "Your credit balance is too low to access the Anthropic API. Please go to Plans & Billing to upgrade or "
    "purchase "
    "credits.";
constexpr std::string_view usage_limits =
    "You have reached your specified API usage limits. You will regain access on 2026-04-01 at 00:00 UTC.";
constexpr NamedShape named_shapes[] = {
    {ErrorKind::quota, "api_usage_limits", {400, "invalid_request_error", usage_limits}},
    {ErrorKind::quota, "credit_balance_too_low", {400, "invalid_request_error", credit_too_low}},
    {ErrorKind::payment, "credit_balance_too_low", {400, "invalid_request_error", credit_too_low}},
};

Shape shape(ErrorKind kind, std::string_view name) {
  const auto* n = detail::find_named(named_shapes, kind, name);
  return n ? n->shape : shape(kind);
}

std::vector<std::string_view> body_names(ErrorKind kind) {
  return detail::named_for(named_shapes, kind);
}

json::object error_object(ErrorKind kind, std::string_view detail, std::string_view body = {}) {
  const auto s = shape(kind, body);
  std::string message(s.message);
  if (!detail.empty()) message += std::string(" (") + std::string(detail) + ")";
  return {{"type", s.type}, {"message", message}};
}

ErrorReply error(ErrorKind kind, const ErrorContext& ctx) {
  json::object body{
      {"type", "error"}, {"error", error_object(kind, ctx.detail, ctx.body)}, {"request_id", ctx.request_id}};
  return {shape(kind, ctx.body).status, json::serialize(body)};
}

SseFrame stream_error_frame(const Answer&, std::size_t) {
  return sse_event(
      "error", json::object{{"type", "error"}, {"error", error_object(ErrorKind::stream_interrupted, {})}});
}

SseFrame malformed_frame() {
  return {
      "event: content_block_delta\ndata: "
      "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\n\n",
      false};
}

std::string models_body(std::string_view) {
  return {};
}
constexpr std::string_view served_paths[] = {"POST /v1/messages"};
// SDK 0.x sends x-api-key, 1.x Authorization: Bearer (provider-wire.md section 0): the API takes either.
constexpr Credential credentials[] = {{"x-api-key", ""}, {"authorization", "Bearer"}};

// Every frame is typed: content_block_delta is content, message_delta closes the content, message_stop
// ends the stream, an `error` event is a failure; the rest (message_start, ping, block start and stop)
// is structure.
FrameRole frame_role(std::string_view event, const json::object& o) {
  const auto type = event_type(event, o);
  if (type == "message_stop") return FrameRole::terminator;
  if (type == "error") return FrameRole::injected;
  if (type == "content_block_delta") return FrameRole::content;
  if (type == "message_delta") return FrameRole::closing;
  return FrameRole::structure;
}
}  // namespace

extern const DialectSpec anthropic_dialect = {
    .id = Dialect::anthropic,
    .request_id_header = "request-id",
    .id_prefix = "msg_",
    .tool_call_id_prefix = "toolu_",
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
};

}  // namespace llmchaos::mock
