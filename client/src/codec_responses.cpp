// OpenAI Responses API (provider-wire.md section 1.6): POST {base}/v1/responses with `input` items;
// typed SSE (`event: <type>`, data with `type` and `sequence_number`) ending with response.completed
// (no [DONE]); response.failed and `error` events are in-stream errors; response.incomplete ends the
// stream with its incomplete_details.reason as the finish (content_filter: a policy stop).
#include <fmt/format.h>

#include "codec_detail.hpp"

namespace llmchaos::client::detail {
namespace {

// A resume reads the stored response's stream after the last sequence number seen (SPEC 3 rule 0).
std::string target(const AttemptRequest& req) {
  if (req.resume)
    return fmt::format("/v1/responses/{}?stream=true&starting_after={}", req.resume->response_id,
                       req.resume->last_sequence);
  return "/v1/responses";
}

Headers headers(const std::string& api_key) {
  return {{"authorization", "Bearer " + api_key}};
}

std::string request_body(const AttemptRequest& req) {
  if (req.resume) return {};  // a GET
  json::array input{json::object{{"role", "user"}, {"content", req.prompt}}};
  if (req.tool_turn) {
    const auto& t = *req.tool_turn;
    input.push_back(json::object{
        {"type", "function_call"}, {"call_id", t.call_id}, {"name", t.name}, {"arguments", t.arguments}});
    input.push_back(
        json::object{{"type", "function_call_output"}, {"call_id", t.call_id}, {"output", t.result}});
  }
  if (req.prefill) input.push_back(json::object{{"role", "assistant"}, {"content", prefill_text}});
  json::object body{{"model", req.model}, {"input", std::move(input)}};
  if (req.tool_call || req.tool_turn) {
    body["tools"] = json::array{json::object{{"type", "function"},
                                             {"name", workflow_tool_name},
                                             {"description", tool_description},
                                             {"parameters", tool_parameters()}}};
    body["tool_choice"] = "auto";
  }
  if (req.stream) body["stream"] = true;
  if (req.background) body["background"] = true;
  return json::serialize(body);
}

void read_usage(const json::value& response, Answer& out) {
  if (const auto* u = find(response, {"usage"}); u && u->is_object()) {
    out.input_tokens = int_at(*u, {"input_tokens"});
    out.output_tokens = int_at(*u, {"output_tokens"});
  }
}

// A function_call output item: the tool call (its call_id is what the tool result answers).
void read_call(const json::value& item, Answer& out) {
  if (out.tool_call) return;
  out.tool_call = true;
  out.tool_call_id = str_at(item, {"call_id"});
  out.tool_name = str_at(item, {"name"});
  out.tool_arguments = str_at(item, {"arguments"});
}

// completed -> "stop" (or "tool_calls"), incomplete -> its reason ("content_filter", "max_output_tokens").
std::string finish_of(const json::value& response, const Answer& a) {
  const auto status = str_at(response, {"status"});
  if (status == "incomplete") {
    auto reason = str_at(response, {"incomplete_details", "reason"});
    return reason.empty() ? status : reason;
  }
  if (status == "completed") return a.tool_call ? "tool_calls" : "stop";
  return status;
}

bool parse_answer(std::string_view body, Answer& out) {
  json::value v;
  if (!parse_json(body, v)) return false;
  const auto* output = find(v, {"output"});
  if (!output || !output->is_array()) return false;
  for (const auto& item : output->get_array()) {
    const auto type = str_at(item, {"type"});
    if (type == "function_call") {
      read_call(item, out);
    } else if (type == "message") {
      if (const auto* content = find(item, {"content"}); content && content->is_array())
        for (const auto& part : content->get_array())
          if (str_at(part, {"type"}) == "output_text") out.text += str_at(part, {"text"});
    }
  }
  out.finish_reason = finish_of(v, out);
  out.model = str_at(v, {"model"});
  read_usage(v, out);
  return true;
}

EventResult on_event(const SseEvent& ev, Answer& acc) {
  if (ev.event == "error") return {EventKind::error, {}, false};
  json::value v;
  if (!parse_json(ev.data, v) || !v.is_object()) return {EventKind::malformed, {}, false};
  const auto type = str_at(v, {"type"});
  if (const auto* seq = find(v, {"sequence_number"}); seq && seq->is_int64())
    acc.last_sequence = seq->as_int64();
  if (type == "error" || type == "response.failed") return {EventKind::error, {}, false};
  if (type == "response.output_text.delta") {
    auto token = str_at(v, {"delta"});
    if (token.empty()) return {};
    acc.text += token;
    return {EventKind::content, std::move(token), false};
  }
  if (type == "response.created" || type == "response.in_progress") {
    if (auto model = str_at(v, {"response", "model"}); !model.empty()) acc.model = model;
    if (auto id = str_at(v, {"response", "id"}); !id.empty()) acc.response_id = id;
    if (const auto* bg = find(v, {"response", "background"}); bg && bg->is_bool())
      acc.background = bg->get_bool();
  } else if (type == "response.output_item.added" || type == "response.output_item.done") {
    if (str_at(v, {"item", "type"}) == "function_call") {
      const auto* item = find(v, {"item"});
      if (!acc.tool_call) read_call(*item, acc);
      if (type == "response.output_item.done") acc.tool_arguments = str_at(*item, {"arguments"});
    }
  } else if (type == "response.function_call_arguments.delta") {
    acc.tool_arguments += str_at(v, {"delta"});
  } else if (type == "response.function_call_arguments.done") {
    acc.tool_arguments = str_at(v, {"arguments"});
  } else if (type == "response.completed" || type == "response.incomplete") {
    const auto* response = find(v, {"response"});
    if (response) {
      if (auto model = str_at(*response, {"model"}); !model.empty()) acc.model = model;
      read_usage(*response, acc);
      acc.finish_reason = finish_of(*response, acc);
    }
    return {EventKind::ignored, {}, true};
  }
  return {};
}

}  // namespace

const DialectCodec& responses_codec() {
  static const DialectCodec codec{Dialect::responses, target, headers, request_body, parse_answer, on_event};
  return codec;
}

}  // namespace llmchaos::client::detail
