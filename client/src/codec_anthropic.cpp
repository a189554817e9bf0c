// Anthropic Messages (provider-wire.md section 2): POST {base}/v1/messages with max_tokens; SSE of
// `event: <type>` + `data: <json>` frames ending with message_stop; `event: error` is an in-stream
// error; frames without an event name are dropped, as the SDK does.
#include "codec_detail.hpp"

namespace llmchaos::client::detail {
namespace {

constexpr int max_tokens = 1024;  // small: the SDK refuses large non-streaming max_tokens

std::string target(const AttemptRequest&) {
  return "/v1/messages";
}

Headers headers(const std::string& api_key) {
  return {{"authorization", "Bearer " + api_key}, {"anthropic-version", "2023-06-01"}};
}

std::string request_body(const AttemptRequest& req) {
  json::array messages{json::object{{"role", "user"}, {"content", req.prompt}}};
  if (req.tool_turn) {
    const auto& t = *req.tool_turn;
    messages.push_back(
        json::object{{"role", "assistant"},
                     {"content", json::array{json::object{{"type", "tool_use"},
                                                          {"id", t.call_id},
                                                          {"name", t.name},
                                                          {"input", tool_arguments_object(t.arguments)}}}}});
    messages.push_back(json::object{
        {"role", "user"},
        {"content", json::array{json::object{
                        {"type", "tool_result"}, {"tool_use_id", t.call_id}, {"content", t.result}}}}});
  }
  if (req.prefill) messages.push_back(json::object{{"role", "assistant"}, {"content", prefill_text}});
  json::object body{{"model", req.model}, {"max_tokens", max_tokens}, {"messages", std::move(messages)}};
  if (req.tool_call || req.tool_turn)
    body["tools"] = json::array{json::object{{"name", workflow_tool_name},
                                             {"description", tool_description},
                                             {"input_schema", tool_parameters()}}};
  if (req.stream) body["stream"] = true;
  return json::serialize(body);
}

void read_usage(const json::value* usage, Answer& out) {
  if (!usage || !usage->is_object()) return;
  if (find(*usage, {"input_tokens"})) out.input_tokens = int_at(*usage, {"input_tokens"});
  if (find(*usage, {"output_tokens"})) out.output_tokens = int_at(*usage, {"output_tokens"});
}

bool parse_answer(std::string_view body, Answer& out) {
  json::value v;
  if (!parse_json(body, v)) return false;
  const auto* content = find(v, {"content"});
  if (!content || !content->is_array()) return false;
  for (const auto& block : content->get_array()) {
    auto type = str_at(block, {"type"});
    if (type == "text") {
      out.text += str_at(block, {"text"});
    } else if (type == "tool_use" && !out.tool_call) {
      out.tool_call = true;
      out.tool_call_id = str_at(block, {"id"});
      out.tool_name = str_at(block, {"name"});
      if (const auto* input = find(block, {"input"})) out.tool_arguments = json::serialize(*input);
    }
  }
  out.finish_reason = str_at(v, {"stop_reason"});
  out.model = str_at(v, {"model"});
  read_usage(find(v, {"usage"}), out);
  return true;
}

EventResult on_event(const SseEvent& ev, Answer& acc) {
  if (ev.event == "error") return {EventKind::error, {}, false};
  if (ev.event.empty() || ev.event == "ping") return {};
  json::value v;
  if (!parse_json(ev.data, v) || !v.is_object()) return {EventKind::malformed, {}, false};
  auto type = str_at(v, {"type"});
  if (type == "error") return {EventKind::error, {}, false};
  if (type == "message_start") {
    if (auto model = str_at(v, {"message", "model"}); !model.empty()) acc.model = model;
    read_usage(find(v, {"message", "usage"}), acc);
  } else if (type == "content_block_start") {
    if (str_at(v, {"content_block", "type"}) == "tool_use" && !acc.tool_call) {
      acc.tool_call = true;
      acc.tool_call_id = str_at(v, {"content_block", "id"});
      acc.tool_name = str_at(v, {"content_block", "name"});
    }
  } else if (type == "content_block_delta") {
    auto delta_type = str_at(v, {"delta", "type"});
    if (delta_type == "text_delta") {
      auto token = str_at(v, {"delta", "text"});
      if (!token.empty()) {
        acc.text += token;
        return {EventKind::content, std::move(token), false};
      }
    } else if (delta_type == "input_json_delta") {
      acc.tool_arguments += str_at(v, {"delta", "partial_json"});
    }
  } else if (type == "message_delta") {
    if (auto reason = str_at(v, {"delta", "stop_reason"}); !reason.empty()) acc.finish_reason = reason;
    read_usage(find(v, {"usage"}), acc);
  } else if (type == "message_stop") {
    return {EventKind::ignored, {}, true};
  }
  return {};
}

}  // namespace

const DialectCodec& anthropic_codec() {
  static const DialectCodec codec{Dialect::anthropic, target, headers, request_body, parse_answer, on_event};
  return codec;
}

}  // namespace llmchaos::client::detail
