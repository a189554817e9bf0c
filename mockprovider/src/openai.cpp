// OpenAI Chat Completions: POST /v1/chat/completions (plain and `data:` SSE ending in [DONE]),
// GET /v1/models, and {"error":{message,type,param,code}} bodies (provider-wire.md section 1).
#include <algorithm>

#include "chat_completions.hpp"
#include "dialect_util.hpp"

namespace llmchaos::mock {

namespace detail {
void read_chat_completions(std::string_view body, ParsedRequest& out) {
  auto& c = out.chat;
  // The common request (no tools, plain JSON) is read in one pass without building a DOM.
  if (ChatScan fast; scan_chat_request(body, fast) && !fast.has_tools) {
    c.stream = fast.stream;
    c.model = fast.model;
    c.include_usage = fast.include_usage;
    c.input_tokens = fast.message_words;
    if (fast.last_is_object) {
      c.last_is_tool_result = fast.last_role == "tool";
      c.prefill = fast.last_role == "assistant";
    }
    return;
  }
  // A typical request fits the stack buffer: parsing it costs no heap allocation.
  unsigned char scratch[4096];
  json::monotonic_resource memory(scratch, sizeof scratch);
  json::value storage(&memory);
  const auto* o = read_request(body, storage, out);
  if (!o) return;
  if (const auto* so = object_member(*o, "stream_options"))
    c.include_usage = bool_member(*so, "include_usage");
  if (const auto* tools = array_member(*o, "tools"))
    for (const auto& t : *tools)
      if (t.is_object())
        if (const auto* fn = object_member(t.get_object(), "function"))
          c.tools.push_back(str_member(*fn, "name"));
  if (const auto* msgs = array_member(*o, "messages")) {
    c.input_tokens = words_in(*msgs);
    if (!msgs->empty() && msgs->back().is_object()) {
      const auto role = str_member(msgs->back().get_object(), "role");
      c.last_is_tool_result = role == "tool";
      c.prefill = role == "assistant";
    }
  }
}
}  // namespace detail

namespace {
using namespace detail;
constexpr std::int64_t created = 1700000000;  // fixed: answers are reproducible

ParsedRequest parse(std::string_view method, std::string_view target, std::string_view body) {
  ParsedRequest out;
  const auto path = path_only(target);
  if (models_list(out, method, path, {"/v1/models", "/models"})) return out;
  if (!accept_post(out, method, path, path == "/v1/chat/completions" || path == "/chat/completions"))
    return out;
  read_chat_completions(body, out);
  return out;
}

std::string_view finish_reason(const Answer& a) {
  switch (a.finish) {
    case Finish::content_filter:
      return "content_filter";
    case Finish::tool_call:
      return "tool_calls";
    default:
      return "stop";
  }
}

json::object usage(const Answer& a) {
  return {{"prompt_tokens", a.input_tokens},
          {"completion_tokens", a.output_tokens()},
          {"total_tokens", a.input_tokens + a.output_tokens()}};
}

json::array tool_calls(const Answer& a, bool with_index) {
  json::object call{{"id", a.tool_call_id},
                    {"type", "function"},
                    {"function", json::object{{"name", a.tool_name}, {"arguments", "{}"}}}};
  if (with_index) call["index"] = 0;
  return json::array{std::move(call)};
}

// The plain answer is the hot path of a load test: rendered straight into one string sized once (the
// same bytes as serializing the equivalent boost::json::object, member order included) rather than
// built as a DOM first, or appended piece by piece (1,690 -> 1,210 instructions a plain answer).
std::string render_body(const Answer& a) {
  using namespace std::string_view_literals;  // literals as views: no strlen per piece
  const int out_tokens = a.output_tokens();
  const bool tool = !a.tool_name.empty();
  // Each string checked (and escaped when it must be) once, for both of render_sized's passes.
  const JsonString id(a.id), model(a.model);
  const JsonString text = tool ? JsonString() : JsonString(a.tokens);
  const JsonString call_id = tool ? JsonString(a.tool_call_id) : JsonString();
  const JsonString tool_name = tool ? JsonString(a.tool_name) : JsonString();
  const fmt::format_int created_digits(created), prompt(a.input_tokens), completion(out_tokens),
      total(a.input_tokens + out_tokens);
  return render_sized([&](auto& put) {
    put(R"({"id":)"sv);
    put(id);
    put(R"(,"object":"chat.completion","created":)"sv);
    put(created_digits);
    put(R"(,"model":)"sv);
    put(model);
    put(R"(,"choices":[{"index":0,"message":{"role":"assistant","content":)"sv);
    if (!tool) {
      put(text);
      put(R"(,"refusal":null})"sv);
    } else {
      put(R"(null,"refusal":null,"tool_calls":[{"id":)"sv);
      put(call_id);
      put(R"(,"type":"function","function":{"name":)"sv);
      put(tool_name);
      put(R"(,"arguments":"{}"}}]})"sv);
    }
    put(R"(,"logprobs":null,"finish_reason":")"sv);
    put(finish_reason(a));
    put(R"("}],"usage":{"prompt_tokens":)"sv);
    put(prompt);
    put(R"(,"completion_tokens":)"sv);
    put(completion);
    put(R"(,"total_tokens":)"sv);
    put(total);
    put("}}"sv);
  });
}

StreamParts render_stream(const Answer& a) {
  const auto chunk = [&](json::object delta, json::value finish) {
    json::object c{{"id", a.id},
                   {"object", "chat.completion.chunk"},
                   {"created", created},
                   {"model", a.model},
                   {"choices", json::array{json::object{{"index", 0},
                                                        {"delta", std::move(delta)},
                                                        {"logprobs", nullptr},
                                                        {"finish_reason", std::move(finish)}}}}};
    if (a.include_usage) c["usage"] = nullptr;
    return c;
  };
  StreamParts p;
  // The accumulator needs delta.role in some chunk: the first one, as the real API does.
  p.head.push_back(sse_data(chunk({{"role", "assistant"}, {"content", ""}}, nullptr)));
  if (a.tool_name.empty()) {
    for (const auto& t : a.tokens) p.content.push_back(sse_data(chunk({{"content", t}}, nullptr), true));
  } else {
    p.content.push_back(sse_data(chunk({{"tool_calls", tool_calls(a, true)}}, nullptr), true));
  }
  p.tail.push_back(sse_data(chunk({}, json::string(finish_reason(a)))));
  if (a.include_usage) {
    json::object u{{"id", a.id},       {"object", "chat.completion.chunk"}, {"created", created},
                   {"model", a.model}, {"choices", json::array{}},          {"usage", usage(a)}};
    p.tail.push_back(sse_data(u));
  }
  p.terminator.push_back({"data: [DONE]\n\n", false});
  return p;
}

struct Shape {
  int status;
  std::string_view type, code, message;
};

Shape shape(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::rate_limit:
      return {429, "requests", "rate_limit_exceeded",
              "Rate limit reached for requests in organization org-mock on requests per min (RPM): Limit 60, "
              "Used 60, "
              "Requested 1. Please try again later. Visit https://platform.openai.com/account/rate-limits to "
              "learn more."};
    case ErrorKind::quota:
      return {429, "insufficient_quota", "insufficient_quota",
              "You exceeded your current quota, please check your plan and billing details. For more "
              "information on "
              "this error, read the docs: https://platform.openai.com/docs/guides/error-codes/api-errors."};
    case ErrorKind::payment:
      return {402, "insufficient_quota", "credit_balance_exhausted",
              "Your credit balance is exhausted. Add credits to continue using the API."};
    case ErrorKind::overloaded:
      return {503, "service_unavailable_error", "server_is_overloaded",
              "The engine is currently overloaded, please try again later"};
    case ErrorKind::server:
    case ErrorKind::stream_interrupted:
    case ErrorKind::malformed_output:  // never an error answer (dialect.hpp)
      return {500, "server_error", "",
              "The server had an error while processing your request. Sorry about that!"};
    case ErrorKind::server_context:
      return {
          500, "server_error", "",
          "The server had an error processing your request: the input (messages) is longer than the model's "
          "context window."};
    case ErrorKind::bad_request:
      return {
          400, "invalid_request_error", "context_length_exceeded",
          "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 "
          "tokens. Please reduce the length of the messages."};
    case ErrorKind::auth:
      return {401, "invalid_request_error", "invalid_api_key",
              "Incorrect API key provided. You can find your API key at "
              "https://platform.openai.com/account/api-keys."};
    case ErrorKind::policy:
      return {400, "invalid_request_error", "content_policy_violation",
              "Your request was rejected as a result of our safety system."};
    case ErrorKind::prefill:
      return {400, "invalid_request_error", "unsupported_value",
              "This model does not support an assistant message prefill: the last message must come from the "
              "user "
              "or a tool."};
    case ErrorKind::not_found:
      return {404, "invalid_request_error", "unknown_url", "Unknown request URL"};
    case ErrorKind::method_not_allowed:
      return {405, "invalid_request_error", "method_not_allowed", "Method not allowed for this URL"};
    case ErrorKind::invalid_json:
      return {400, "invalid_request_error", "",
              "We could not parse the JSON body of your request. (HINT: This likely means you aren't using "
              "your HTTP "
              "library correctly.)"};
    case ErrorKind::too_large:
      return {413, "invalid_request_error", "request_too_large",
              "The request body is larger than the limit."};
    case ErrorKind::missing_key:  // no Authorization header (yihong0618/bilingual_book_maker#137 quotes the
                                  // message)
      return {
          401, "invalid_request_error", "",
          "You didn't provide an API key. You need to provide your API key in an Authorization header using "
          "Bearer auth (i.e. Authorization: Bearer YOUR_KEY), or as the password field (with blank username) "
          "if "
          "you're accessing the API from your browser and are prompted for a username and password. You can "
          "obtain an API key from https://platform.openai.com/account/api-keys."};
  }
  return {500, "server_error", "", "error"};
}

// Named real bodies (a step's `body`): the billing causes OpenAI puts in `code` under
// type "insufficient_quota" (provider-wire.md, OpenAI errors), and the hard billing limit, which users
// report as a 400 invalid_request_error (all-in-aigc/aiwallpaper#2, bajrangCoder/acode-plugin-chatgpt#19).
struct NamedShape {
  ErrorKind kind;
  std::string_view name;
  Shape shape;
};
constexpr NamedShape named_shapes[] = {
    {ErrorKind::quota,
     "credit_balance_exhausted",
     {429, "insufficient_quota", "credit_balance_exhausted",
      "Your credit balance is exhausted. Add credits to continue."}},
    {ErrorKind::quota,
     "organization_spend_limit_exceeded",
     {429, "insufficient_quota", "organization_spend_limit_exceeded",
      "Your organization has reached the spend limit set for this month."}},
    {ErrorKind::quota,
     "project_spend_limit_exceeded",
     {429, "insufficient_quota", "project_spend_limit_exceeded",
      "This project has reached its monthly budget."}},
    {ErrorKind::quota,
     "organization_usage_limit_exceeded",
     {429, "insufficient_quota", "organization_usage_limit_exceeded",
      "Your organization has reached its usage limit for this billing period."}},
    {ErrorKind::quota,
     "billing_hard_limit_reached",
     {400, "invalid_request_error", "billing_hard_limit_reached", "Billing hard limit has been reached"}},
};

Shape shape(ErrorKind kind, std::string_view name) {
  const auto* n = detail::find_named(named_shapes, kind, name);
  return n ? n->shape : shape(kind);
}

std::vector<std::string_view> body_names(ErrorKind kind) {
  return detail::named_for(named_shapes, kind);
}

json::value error_json(ErrorKind kind, std::string_view detail, std::string_view body = {}) {
  const auto s = shape(kind, body);
  std::string message(s.message);
  if (!detail.empty()) message += std::string(" (") + std::string(detail) + ")";
  return json::object{
      {"error", json::object{{"message", message},
                             {"type", s.type},
                             {"param", kind == ErrorKind::bad_request ? json::value("messages") : nullptr},
                             {"code", s.code.empty() ? json::value(nullptr) : json::value(s.code)}}}};
}

ErrorReply error(ErrorKind kind, const ErrorContext& ctx) {
  return {shape(kind, ctx.body).status, json::serialize(error_json(kind, ctx.detail, ctx.body))};
}

SseFrame stream_error_frame(const Answer&, std::size_t) {
  return sse_data(error_json(ErrorKind::stream_interrupted, {}));
}

SseFrame malformed_frame() {
  return {
      "data: "
      "{\"id\":\"chatcmpl-broken\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{"
      "\"content\":\n\n",
      false};
}

std::string models_body(std::string_view model) {
  json::object m{{"id", model}, {"object", "model"}, {"created", created}, {"owned_by", "llmchaos"}};
  return json::serialize(json::object{{"object", "list"}, {"data", json::array{std::move(m)}}});
}
constexpr std::string_view served_paths[] = {"POST /v1/chat/completions", "GET /v1/models"};
constexpr Credential credentials[] = {{"authorization", "Bearer"}};

// A chunk with visible content (text, a refusal, a tool call delta) is content; one with a finish_reason,
// and the usage chunk of no choices, close the content; the rest (the role chunk) is structure.
FrameRole frame_role(std::string_view, const json::object& o) {
  const auto* choice = first_object(o, "choices");
  if (!choice) return o.contains("usage") ? FrameRole::closing : FrameRole::structure;
  if (const auto* d = choice->if_contains("delta"); d && d->is_object()) {
    const auto& delta = d->get_object();
    if (non_empty_string(delta, "content") || non_empty_string(delta, "refusal") ||
        delta.contains("tool_calls"))
      return FrameRole::content;
  }
  const auto* finish = choice->if_contains("finish_reason");
  return finish && !finish->is_null() ? FrameRole::closing : FrameRole::structure;
}
}  // namespace

extern const DialectSpec openai_dialect = {
    .id = Dialect::openai,
    .request_id_header = "x-request-id",
    .id_prefix = "chatcmpl-",
    .tool_call_id_prefix = "call_",
    .sdk_base_suffix = "/v1",
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
    .done_data = "[DONE]",
    .auth = {credentials, ""},
};

}  // namespace llmchaos::mock
