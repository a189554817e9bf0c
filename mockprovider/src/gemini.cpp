// Gemini generateContent: POST /v1beta/models/{model}:generateContent and
// :streamGenerateContent?alt=sse (`data:` frames ending in CRLF CRLF, no end sentinel besides the final
// frame carrying finishReason), {"error":{code,message,status}} bodies (provider-wire.md section 3).
#include <fmt/format.h>

#include "dialect_util.hpp"

namespace llmchaos::mock {
namespace {
using namespace detail;

ParsedRequest parse(std::string_view method, std::string_view target, std::string_view body) {
  ParsedRequest out;
  const auto path = path_only(target);
  std::string_view rest;
  for (std::string_view prefix : {"/v1beta/models/", "/v1/models/", "/v1alpha/models/"})
    if (path.substr(0, prefix.size()) == prefix) rest = path.substr(prefix.size());
  const auto colon = rest.rfind(':');
  const auto verb = colon == std::string_view::npos ? std::string_view{} : rest.substr(colon + 1);
  if (!accept_post(out, method, path,
                   !rest.empty() && (verb == "generateContent" || verb == "streamGenerateContent")))
    return out;
  out.chat.model = std::string(rest.substr(0, colon));
  // The stream is chosen by the method, never by Accept. The SDK always asks for alt=sse; without it
  // the real API answers one JSON array of the same chunks (provider-wire.md section 3.3).
  out.chat.stream = verb == "streamGenerateContent";
  if (out.chat.stream) {
    bool sse = false;
    for (auto q = query_of(target); !q.empty();) {
      const auto amp = q.find('&');
      if (q.substr(0, amp) == "alt=sse") sse = true;
      q = amp == std::string_view::npos ? std::string_view{} : q.substr(amp + 1);
    }
    out.chat.json_array_stream = !sse;
  }
  json::value storage;
  const auto* o = read_request(body, storage, out, false);  // model and stream came from the path
  if (!o) return out;
  auto& c = out.chat;
  if (const auto* tools = array_member(*o, "tools"))
    for (const auto& t : *tools)
      if (t.is_object())
        if (const auto* decls = array_member(t.get_object(), "functionDeclarations"))
          for (const auto& d : *decls)
            if (d.is_object()) c.tools.push_back(str_member(d.get_object(), "name"));
  if (const auto* contents = array_member(*o, "contents")) {
    c.input_tokens = words_in(*contents);
    if (!contents->empty() && contents->back().is_object()) {
      const auto& last = contents->back().get_object();
      c.prefill = str_member(last, "role") == "model";
      if (const auto* parts = array_member(last, "parts"))
        for (const auto& part : *parts)
          if (part.is_object() && part.get_object().contains("functionResponse"))
            c.last_is_tool_result = true;
    }
  }
  return out;
}

std::string_view finish_reason(const Answer& a) {
  return a.finish == Finish::content_filter ? "SAFETY" : "STOP";
}

json::object usage(const Answer& a, bool final) {
  json::object u{{"promptTokenCount", a.input_tokens}};
  if (final) {
    u["candidatesTokenCount"] = a.output_tokens();
    u["totalTokenCount"] = a.input_tokens + a.output_tokens();
  }
  return u;
}

json::object response(const Answer& a, json::array parts, std::string_view finish, bool final) {
  json::object candidate{{"content", json::object{{"role", "model"}, {"parts", std::move(parts)}}},
                         {"index", 0}};
  if (!finish.empty()) candidate["finishReason"] = finish;
  return {{"candidates", json::array{std::move(candidate)}},
          {"usageMetadata", usage(a, final)},
          {"modelVersion", a.model},
          {"responseId", a.id}};
}

json::array answer_parts(const Answer& a) {
  if (!a.tool_name.empty())
    return {json::object{{"functionCall", json::object{{"name", a.tool_name}, {"args", json::object{}}}}}};
  return {json::object{{"text", a.text()}}};
}

std::string render_body(const Answer& a) {
  return json::serialize(response(a, answer_parts(a), finish_reason(a), true));
}

StreamParts render_stream(const Answer& a) {
  StreamParts p;
  if (a.tool_name.empty()) {
    for (const auto& t : a.tokens)
      p.content.push_back(sse_data_crlf(response(a, {json::object{{"text", t}}}, {}, false), true));
  } else {
    p.content.push_back(sse_data_crlf(response(a, answer_parts(a), {}, false), true));
  }
  // Gemini has no [DONE]: the final frame, with finishReason and the full usage, ends the answer.
  p.terminator.push_back(sse_data_crlf(response(a, {json::object{{"text", ""}}}, finish_reason(a), true)));
  return p;
}

struct Shape {
  int status;
  std::string_view status_name, message;
};

Shape shape(ErrorKind kind) {
  switch (kind) {
    case ErrorKind::rate_limit:
      return {429, "RESOURCE_EXHAUSTED",
              "Resource exhausted: too many requests per minute. Please try again later."};
    case ErrorKind::quota:
      return {429, "RESOURCE_EXHAUSTED",
              "You exceeded your current quota, please check your plan and billing details."};
    case ErrorKind::payment:
      return {402, "FAILED_PRECONDITION",
              "The prepaid credits of this project are exhausted; add billing credits to continue."};
    case ErrorKind::overloaded:
    case ErrorKind::stream_interrupted:
      return {503, "UNAVAILABLE", "The model is overloaded. Please try again later."};
    case ErrorKind::server:
    case ErrorKind::malformed_output:  // never an error answer (dialect.hpp)
      return {500, "INTERNAL",
              "An internal error has occurred. Please retry or report in "
              "https://developers.generativeai.google/guide/troubleshooting"};
    case ErrorKind::server_context:
      return {500, "INTERNAL",
              "Internal error while processing the input: the input token count exceeds the context window."};
    case ErrorKind::bad_request:
      return {400, "INVALID_ARGUMENT",
              "The input token count (1048577) exceeds the maximum number of tokens allowed (1048576)."};
    case ErrorKind::auth:
      return {401, "UNAUTHENTICATED", "API key not valid. Please pass a valid API key."};
    case ErrorKind::policy:
      return {400, "INVALID_ARGUMENT", "The request was blocked by the content safety policy."};
    case ErrorKind::prefill:
      return {400, "INVALID_ARGUMENT",
              "Please ensure that the conversation ends with a user turn: a model (assistant) prefill is not "
              "supported by this model."};
    case ErrorKind::not_found:
      return {404, "NOT_FOUND", "Requested entity was not found."};
    case ErrorKind::method_not_allowed:
      return {405, "INVALID_ARGUMENT", "Method not allowed."};
    case ErrorKind::invalid_json:
      return {400, "INVALID_ARGUMENT", "Invalid JSON payload received."};
    case ErrorKind::too_large:
      return {413, "INVALID_ARGUMENT", "Request payload size exceeds the limit."};
    // No key: a 403, not a 401 (PublicAffairs/openai-gemini#92, UnityGameStudio/Gemini-Unity-Package#1).
    case ErrorKind::missing_key:
      return {403, "PERMISSION_DENIED",
              "Method doesn't allow unregistered callers (callers without established identity). Please use "
              "API Key "
              "or other form of API consumer identity to call this API."};
  }
  return {500, "INTERNAL", "error"};
}

// Named real bodies (a step's `body`), with the QuotaFailure they carry, if any (provider-wire.md, Gemini
// errors): a per-minute limit worded "You exceeded your current quota" (a rate limit: its quotaId says
// PerMinute), a free tier whose limit is 0 (quota: no wait helps), and Google's bodies without a
// QuotaFailure that name the limit's window in words only: "requests per minute" (a rate limit:
// google-gemini/deprecated-generative-ai-python#206, home-assistant/core#132832) and "Requests per day per
// user per tier" (a daily quota: google-gemini/gemini-cli#10513, #2047). The project number is a stand-in.
struct NamedShape {
  ErrorKind kind;
  std::string_view name;
  Shape shape;
  std::string_view quota_metric, quota_id;
};
constexpr NamedShape named_shapes[] = {
    {ErrorKind::rate_limit,
     "per_minute_quota",
     {429, "RESOURCE_EXHAUSTED",
      "You exceeded your current quota, please check your plan and billing details."},
     "generativelanguage.googleapis.com/generate_content_free_tier_requests",
     "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"},
    {ErrorKind::quota,
     "free_tier_limit_0",
     {429, "RESOURCE_EXHAUSTED",
      "Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, "
      "limit: 0, "
      "model: gemini-2.5-pro"},
     "generativelanguage.googleapis.com/generate_content_free_tier_requests",
     "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"},
    {ErrorKind::rate_limit,
     "per_minute_wording",
     {429, "RESOURCE_EXHAUSTED",
      "Quota exceeded for quota metric 'Generate Content API requests per minute' and limit 'GenerateContent "
      "request limit per minute for a region' of service 'generativelanguage.googleapis.com' for consumer "
      "'project_number:100000000001'."},
     "",
     ""},
    {ErrorKind::quota,
     "per_day_wording",
     {429, "RESOURCE_EXHAUSTED",
      "Quota exceeded for quota metric 'Gemini 2.5 Pro Requests' and limit 'Gemini 2.5 Pro Requests per day "
      "per "
      "user per tier' of service 'cloudcode-pa.googleapis.com' for consumer 'project_number:100000000001'."},
     "",
     ""},
};
constexpr NamedShape default_quota = {ErrorKind::quota,
                                      "",
                                      {},
                                      "generativelanguage.googleapis.com/generate_content_requests",
                                      "GenerateRequestsPerDayPerProjectPerModel"};

const NamedShape* named(ErrorKind kind, std::string_view name) {
  return detail::find_named(named_shapes, kind, name);
}

std::vector<std::string_view> body_names(ErrorKind kind) {
  return detail::named_for(named_shapes, kind);
}

json::object error_json(ErrorKind kind, const ErrorContext& ctx) {
  const auto* n = named(kind, ctx.body);
  const auto s = n ? n->shape : shape(kind);
  std::string message(s.message);
  if (!ctx.detail.empty()) message += std::string(" (") + std::string(ctx.detail) + ")";
  json::object e{{"code", s.status}, {"message", message}, {"status", s.status_name}};
  json::array details;
  if (!n && kind == ErrorKind::quota) n = &default_quota;
  if (n && !n->quota_id.empty())
    details.push_back(json::object{{"@type", "type.googleapis.com/google.rpc.QuotaFailure"},
                                   {"violations", json::array{json::object{{"quotaMetric", n->quota_metric},
                                                                           {"quotaId", n->quota_id}}}}});
  // Gemini's retry hint lives in the body (RetryInfo), not in a header.
  if (ctx.retry_after_ms)
    details.push_back(json::object{{"@type", "type.googleapis.com/google.rpc.RetryInfo"},
                                   {"retryDelay", fmt::format("{}s", *ctx.retry_after_ms / 1000.0)}});
  if (!details.empty()) e["details"] = std::move(details);
  return {{"error", std::move(e)}};
}

ErrorReply error(ErrorKind kind, const ErrorContext& ctx) {
  const auto* n = named(kind, ctx.body);
  return {n ? n->shape.status : shape(kind).status, json::serialize(error_json(kind, ctx))};
}

// The SDK throws on a chunk with error.code in 400..599.
SseFrame stream_error_frame(const Answer&, std::size_t) {
  return sse_data_crlf(error_json(ErrorKind::stream_interrupted, {}));
}

SseFrame malformed_frame() {
  return {"data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\r\n\r\n", false};
}

std::string models_body(std::string_view) {
  return {};
}
constexpr std::string_view served_paths[] = {"POST /v1beta/models/{model}:generateContent",
                                             "POST /v1beta/models/{model}:streamGenerateContent?alt=sse"};
constexpr Credential credentials[] = {
    {"x-goog-api-key", ""}};  // or the `key=` query parameter of REST clients

// A candidate with a finishReason ends the stream (Gemini has no other terminator); one whose parts carry
// text or a functionCall is content; the rest is structure.
FrameRole frame_role(std::string_view, const json::object& o) {
  const auto* candidate = first_object(o, "candidates");
  if (!candidate) return FrameRole::structure;
  if (candidate->contains("finishReason")) return FrameRole::terminator;
  const auto* content = candidate->if_contains("content");
  const auto* parts = content && content->is_object() ? content->get_object().if_contains("parts") : nullptr;
  if (parts && parts->is_array())
    for (const auto& p : parts->get_array())
      if (p.is_object() &&
          (non_empty_string(p.get_object(), "text") || p.get_object().contains("functionCall")))
        return FrameRole::content;
  return FrameRole::structure;
}
}  // namespace

extern const DialectSpec gemini_dialect = {
    .id = Dialect::gemini,
    .request_id_header = "x-request-id",
    .id_prefix = "resp-",
    .tool_call_id_prefix = "call_",
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
    .auth = {credentials, "key"},
    .retry_hint_in_body = true,
};

}  // namespace llmchaos::mock
