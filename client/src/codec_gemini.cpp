// Gemini generateContent (provider-wire.md section 3): POST {base}/v1beta/models/{model}:generateContent
// or :streamGenerateContent?alt=sse; SSE frames (\r\n\r\n) with no sentinel, so the end of a stream is
// the frame that carries finishReason; a frame whose `error` has a numeric code 400..599 is an
// in-stream error (the SDK's rule).
#include "codec_detail.hpp"

namespace llmchaos::client::detail {
namespace {

std::string target(const AttemptRequest& req) {
  return "/v1beta/models/" + req.model + (req.stream ? ":streamGenerateContent?alt=sse" : ":generateContent");
}

Headers headers(const std::string& api_key) {
  return {{"x-goog-api-key", api_key}};
}

json::object text_content(std::string_view role, std::string_view text) {
  return json::object{{"role", role}, {"parts", json::array{json::object{{"text", text}}}}};
}

std::string request_body(const AttemptRequest& req) {
  json::array contents{text_content("user", req.prompt)};
  if (req.tool_turn) {
    const auto& t = *req.tool_turn;
    json::object call{{"name", t.name}, {"args", tool_arguments_object(t.arguments)}};
    if (!t.call_id.empty()) call["id"] = t.call_id;
    contents.push_back(
        json::object{{"role", "model"}, {"parts", json::array{json::object{{"functionCall", call}}}}});
    json::object response{{"name", t.name}, {"response", json::object{{"result", t.result}}}};
    if (!t.call_id.empty()) response["id"] = t.call_id;
    contents.push_back(
        json::object{{"role", "user"}, {"parts", json::array{json::object{{"functionResponse", response}}}}});
  }
  if (req.prefill) contents.push_back(text_content("model", prefill_text));
  json::object body{{"contents", std::move(contents)}};
  if (req.tool_call || req.tool_turn)
    body["tools"] = json::array{
        json::object{{"functionDeclarations", json::array{json::object{{"name", workflow_tool_name},
                                                                       {"description", tool_description},
                                                                       {"parameters", tool_parameters()}}}}}};
  return json::serialize(body);
}

// One GenerateContentResponse (a whole answer or one stream frame) into `acc`; returns its visible text.
std::string read_response(const json::value& v, Answer& acc) {
  std::string text;
  if (const auto* parts = find(v, {"candidates", 0, "content", "parts"}); parts && parts->is_array()) {
    for (const auto& part : parts->get_array()) {
      if (const auto* thought = find(part, {"thought"}); thought && thought->is_bool() && thought->get_bool())
        continue;  // thoughts are not the answer (the SDK's response.text skips them)
      text += str_at(part, {"text"});
      if (const auto* call = find(part, {"functionCall"}); call && !acc.tool_call) {
        acc.tool_call = true;
        acc.tool_name = str_at(*call, {"name"});
        acc.tool_call_id = str_at(*call, {"id"});
        if (const auto* args = find(*call, {"args"})) acc.tool_arguments = json::serialize(*args);
      }
    }
  }
  if (auto reason = str_at(v, {"candidates", 0, "finishReason"}); !reason.empty()) acc.finish_reason = reason;
  if (auto model = str_at(v, {"modelVersion"}); !model.empty()) acc.model = model;
  if (find(v, {"usageMetadata"})) {
    acc.input_tokens = int_at(v, {"usageMetadata", "promptTokenCount"});
    acc.output_tokens = int_at(v, {"usageMetadata", "candidatesTokenCount"});
  }
  acc.text += text;
  return text;
}

bool parse_answer(std::string_view body, Answer& out) {
  json::value v;
  if (!parse_json(body, v) || !find(v, {"candidates"})) return false;
  read_response(v, out);
  return true;
}

bool is_stream_error(const json::value& v) {
  const auto* code = find(v, {"error", "code"});
  if (!code || !(code->is_int64() || code->is_uint64() || code->is_double())) return false;
  int c = int_at(v, {"error", "code"});
  return c >= 400 && c <= 599;
}

EventResult on_event(const SseEvent& ev, Answer& acc) {
  json::value v;
  if (!parse_json(ev.data, v) || !v.is_object()) return {EventKind::malformed, {}, false};
  if (is_stream_error(v)) return {EventKind::error, {}, false};
  auto token = read_response(v, acc);
  const bool end = find(v, {"candidates", 0, "finishReason"}) != nullptr;
  if (token.empty()) return {EventKind::ignored, {}, end};
  return {EventKind::content, std::move(token), end};
}

}  // namespace

const DialectCodec& gemini_codec() {
  static const DialectCodec codec{Dialect::gemini, target, headers, request_body, parse_answer, on_event};
  return codec;
}

}  // namespace llmchaos::client::detail
