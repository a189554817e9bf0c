// OpenAI Chat Completions (provider-wire.md section 1): POST {base}/v1/chat/completions; SSE of
// `data: <chunk>` frames ending with `data: [DONE]`; an in-stream error is a chunk with an `error`.
#include "codec_detail.hpp"

namespace llmchaos::client::detail {
namespace {

std::string target(const AttemptRequest&) {
  return "/v1/chat/completions";
}

Headers headers(const std::string& api_key) {
  return {{"authorization", "Bearer " + api_key}};
}

std::string request_body(const AttemptRequest& req) {
  json::array messages{json::object{{"role", "user"}, {"content", req.prompt}}};
  if (req.tool_turn) {
    const auto& t = *req.tool_turn;
    messages.push_back(json::object{
        {"role", "assistant"},
        {"content", nullptr},
        {"tool_calls", json::array{json::object{
                           {"id", t.call_id},
                           {"type", "function"},
                           {"function", json::object{{"name", t.name}, {"arguments", t.arguments}}}}}}});
    messages.push_back(json::object{{"role", "tool"}, {"tool_call_id", t.call_id}, {"content", t.result}});
  }
  if (req.prefill) messages.push_back(json::object{{"role", "assistant"}, {"content", prefill_text}});
  json::object body{{"model", req.model}, {"messages", std::move(messages)}};
  if (req.tool_call || req.tool_turn) {
    body["tools"] = json::array{json::object{{"type", "function"},
                                             {"function", json::object{{"name", workflow_tool_name},
                                                                       {"description", tool_description},
                                                                       {"parameters", tool_parameters()}}}}};
    body["tool_choice"] = "auto";
  }
  if (req.stream) {
    body["stream"] = true;
    body["stream_options"] = json::object{{"include_usage", true}};
  }
  return json::serialize(body);
}

void read_usage(const json::value& v, Answer& out) {
  if (const auto* u = find(v, {"usage"}); u && u->is_object()) {
    out.input_tokens = int_at(*u, {"prompt_tokens"});
    out.output_tokens = int_at(*u, {"completion_tokens"});
  }
}

bool parse_answer(std::string_view body, Answer& out) {
  json::value v;
  if (!parse_json(body, v) || !find(v, {"choices"}) || !find(v, {"choices"})->is_array()) return false;
  out.text = str_at(v, {"choices", 0, "message", "content"});
  if (const auto* calls = find(v, {"choices", 0, "message", "tool_calls", 0})) {
    out.tool_call = true;
    out.tool_call_id = str_at(*calls, {"id"});
    out.tool_name = str_at(*calls, {"function", "name"});
    out.tool_arguments = str_at(*calls, {"function", "arguments"});
  }
  out.finish_reason = str_at(v, {"choices", 0, "finish_reason"});
  out.model = str_at(v, {"model"});
  read_usage(v, out);
  return true;
}

EventResult on_event(const SseEvent& ev, Answer& acc) {
  if (ev.data == "[DONE]") return {EventKind::ignored, {}, true};
  json::value v;
  if (!parse_json(ev.data, v) || !v.is_object()) return {EventKind::malformed, {}, false};
  if (find(v, {"error"})) return {EventKind::error, {}, false};
  if (auto model = str_at(v, {"model"}); !model.empty()) acc.model = model;
  read_usage(v, acc);
  const auto* choice = find(v, {"choices", 0});
  if (!choice) return {};
  if (auto reason = str_at(*choice, {"finish_reason"}); !reason.empty()) acc.finish_reason = reason;
  if (const auto* call = find(*choice, {"delta", "tool_calls", 0})) {
    acc.tool_call = true;
    if (auto id = str_at(*call, {"id"}); !id.empty()) acc.tool_call_id = id;
    if (auto name = str_at(*call, {"function", "name"}); !name.empty()) acc.tool_name = name;
    acc.tool_arguments += str_at(*call, {"function", "arguments"});
  }
  auto token = str_at(*choice, {"delta", "content"});
  if (token.empty()) return {};
  acc.text += token;
  return {EventKind::content, std::move(token), false};
}

}  // namespace

const DialectCodec& openai_codec() {
  static const DialectCodec codec{Dialect::openai, target, headers, request_body, parse_answer, on_event};
  return codec;
}

}  // namespace llmchaos::client::detail
