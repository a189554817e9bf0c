// OpenAI Responses API: POST /v1/responses, plain (one response object) and streamed (typed SSE:
// `event: <type>` + `data` carrying `type` and `sequence_number`, response.created first,
// response.output_text.delta per token, response.completed as the terminator, no [DONE]; a mid-stream
// failure is response.failed carrying response.error; a content-filter stop is response.incomplete).
// Tool calls are function_call output items. The error bodies, request-id header and model list are
// OpenAI's own (the same platform answers both APIs): this unit forwards them to the openai dialect.
// Background responses (`background: true`) are stored by the engine; `GET /v1/responses/{id}` reads
// one back (the response object), `?stream=true&starting_after=N` re-serves its stream from sequence
// N+1: the resume of a cut stream (SPEC 3 rule 0). This unit only reads those requests and words the
// 404 of an unknown id; the store and the frames kept are the engine's.
// provider-wire.md section 1.6; the `openai` SDK's lib/responses/ResponseAccumulator.ts and
// resources/responses/responses.ts (retrieve: `stream`, `starting_after` query parameters).
#include <cctype>
#include <charconv>

#include "dialect_util.hpp"

namespace llmchaos::mock {

extern const DialectSpec openai_dialect;

namespace {
using namespace detail;
constexpr std::int64_t created = 1700000000;  // fixed: answers are reproducible

// The message and function-call items' ids share the response's number ("resp_7" -> "msg_7").
std::string item_id(const Answer& a, std::string_view prefix) {
  std::string_view id = a.id;
  if (const auto u = id.find('_'); u != std::string_view::npos) id.remove_prefix(u + 1);
  return std::string(prefix) + std::string(id);
}

// The id part of /v1/responses/{id} (or /responses/{id}); "" when the path is not one.
std::string_view stored_id(std::string_view path) {
  for (std::string_view prefix : {"/v1/responses/", "/responses/"})
    if (path.substr(0, prefix.size()) == prefix) return path.substr(prefix.size());
  return {};
}

// An id as OpenAI issues them: letters, digits, '_' and '-', at most 128 bytes.
bool valid_id(std::string_view id) {
  if (id.empty() || id.size() > 128) return false;
  for (const char ch : id)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-') return false;
  return true;
}

// GET /v1/responses/{id}[?stream=true&starting_after=N]: a bad id is unknown_url, a bad parameter 400.
void parse_retrieve(ParsedRequest& out, std::string_view method, std::string_view target,
                    std::string_view id) {
  if (!valid_id(id)) {
    out.error = RequestError::not_found;
    out.detail = std::string(path_only(target));
    return;
  }
  if (method != "GET") {
    out.error = RequestError::method_not_allowed;
    out.detail = std::string(method);
    return;
  }
  Retrieve r;
  r.id = std::string(id);
  for (auto q = query_of(target); !q.empty();) {
    const auto amp = q.find('&');
    const auto pair = q.substr(0, amp);
    q = amp == std::string_view::npos ? std::string_view{} : q.substr(amp + 1);
    const auto eq = pair.find('=');
    const auto key = pair.substr(0, eq);
    const auto value = eq == std::string_view::npos ? std::string_view{} : pair.substr(eq + 1);
    if (key == "stream") {
      r.stream = value == "true";
    } else if (key == "starting_after") {
      std::int64_t n = -1;
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
      if (ec != std::errc{} || end != value.data() + value.size() || n < 0) {
        out.error = RequestError::malformed_json;
        out.detail = "starting_after must be a non-negative integer";
        return;
      }
      r.starting_after = n;
    }
  }
  out.chat.stream = r.stream;
  out.retrieve = std::move(r);
}

ParsedRequest parse(std::string_view method, std::string_view target, std::string_view body) {
  ParsedRequest out;
  const auto path = path_only(target);
  if (path == "/v1/models" || path == "/models") return openai_dialect.parse(method, target, body);
  if (const auto id = stored_id(path); !id.empty() || path == "/v1/responses/" || path == "/responses/") {
    parse_retrieve(out, method, target, id);
    return out;
  }
  if (!accept_post(out, method, path, path == "/v1/responses" || path == "/responses")) return out;
  json::value storage;
  const auto* o = read_request(body, storage, out);
  if (!o) return out;
  auto& c = out.chat;
  c.background = bool_member(*o, "background");  // stream and model: read_request
  // Function tools are flat ({"type":"function","name":...}); a chat-style {"function":{"name"}} is read too.
  if (const auto* tools = array_member(*o, "tools"))
    for (const auto& t : *tools)
      if (t.is_object()) {
        auto name = str_member(t.get_object(), "name");
        if (const auto* fn = object_member(t.get_object(), "function"); name.empty() && fn)
          name = str_member(*fn, "name");
        c.tools.push_back(std::move(name));
      }
  // `input` is a string (one user message) or a list of items: messages ({role, content}),
  // function_call and function_call_output items.
  if (const auto* input = o->if_contains("input")) {
    c.input_tokens = words_in(*input);
    if (input->is_array() && !input->get_array().empty() && input->get_array().back().is_object()) {
      const auto& last = input->get_array().back().get_object();
      c.last_is_tool_result = str_member(last, "type") == "function_call_output";
      c.prefill = str_member(last, "role") == "assistant";
    }
  }
  if (const auto* instructions = o->if_contains("instructions")) c.input_tokens += words_in(*instructions);
  return out;
}

json::object usage(const Answer& a) {
  return {{"input_tokens", a.input_tokens},
          {"input_tokens_details", json::object{{"cached_tokens", 0}}},
          {"output_tokens", a.output_tokens()},
          {"output_tokens_details", json::object{{"reasoning_tokens", 0}}},
          {"total_tokens", a.input_tokens + a.output_tokens()}};
}

json::object text_part(std::string_view text) {
  return {
      {"type", "output_text"}, {"text", text}, {"annotations", json::array{}}, {"logprobs", json::array{}}};
}

// The answer's one output item: a message with its text so far, or the function call.
json::object output_item(const Answer& a, std::string_view status, bool whole) {
  if (!a.tool_name.empty())
    return {{"type", "function_call"}, {"id", item_id(a, "fc_")},        {"call_id", a.tool_call_id},
            {"name", a.tool_name},     {"arguments", whole ? "{}" : ""}, {"status", status}};
  json::array content;
  if (whole) content.push_back(text_part(a.text()));
  return {{"type", "message"},
          {"id", item_id(a, "msg_")},
          {"status", status},
          {"role", "assistant"},
          {"content", std::move(content)}};
}

// The response object: what a plain request gets and what response.created / .completed / .failed /
// .incomplete carry. `status`: in_progress (no output yet), completed, incomplete, failed.
json::object response_object(const Answer& a, std::string_view status) {
  const bool done = status != "in_progress" && status != "failed";
  json::array output;
  if (done) output.push_back(output_item(a, status == "incomplete" ? "incomplete" : "completed", true));
  json::value incomplete = nullptr;
  if (status == "incomplete") incomplete = json::object{{"reason", "content_filter"}};
  return {{"id", a.id},
          {"object", "response"},
          {"created_at", created},
          {"status", status},
          {"background", a.background},
          {"error", nullptr},
          {"incomplete_details", std::move(incomplete)},
          {"instructions", nullptr},
          {"max_output_tokens", nullptr},
          {"metadata", json::object{}},
          {"model", a.model},
          {"output", std::move(output)},
          {"parallel_tool_calls", true},
          {"previous_response_id", nullptr},
          {"store", true},
          {"temperature", 1},
          {"text", json::object{{"format", json::object{{"type", "text"}}}}},
          {"tool_choice", "auto"},
          {"tools", json::array{}},
          {"top_p", 1},
          {"truncation", "disabled"},
          {"usage", done ? json::value(usage(a)) : json::value(nullptr)},
          {"user", nullptr}};
}

std::string_view final_status(const Answer& a) {
  return a.finish == Finish::content_filter ? "incomplete" : "completed";
}

std::string render_body(const Answer& a) {
  return json::serialize(response_object(a, final_status(a)));
}

// One typed frame: `event: <type>` and data {type, ...fields, sequence_number}.
SseFrame typed(std::string_view type, json::object fields, std::size_t sequence, bool content = false) {
  json::object data;
  data.reserve(fields.size() + 2);
  data["type"] = type;
  for (auto& [k, v] : fields) data[k] = std::move(v);
  data["sequence_number"] = sequence;
  return sse_event(type, data, content);
}

StreamParts render_stream(const Answer& a) {
  StreamParts p;
  std::size_t seq = 0;
  const auto add = [&](std::vector<SseFrame>& part, std::string_view type, json::object fields,
                       bool content = false) {
    part.push_back(typed(type, std::move(fields), seq++, content));
  };
  const bool text = a.tool_name.empty();
  const auto id = item_id(a, text ? "msg_" : "fc_");
  add(p.head, "response.created", {{"response", response_object(a, "in_progress")}});
  add(p.head, "response.in_progress", {{"response", response_object(a, "in_progress")}});
  add(p.head, "response.output_item.added",
      {{"output_index", 0}, {"item", output_item(a, "in_progress", false)}});
  const json::object at{{"item_id", id}, {"output_index", 0}, {"content_index", 0}};
  const auto with = [&](json::object more) {
    json::object o = at;
    for (auto& [k, v] : more) o[k] = std::move(v);
    return o;
  };
  if (text) {
    add(p.head, "response.content_part.added", with({{"part", text_part("")}}));
    for (const auto& t : a.tokens)
      add(p.content, "response.output_text.delta", with({{"delta", t}, {"logprobs", json::array{}}}), true);
    add(p.tail, "response.output_text.done", with({{"text", a.text()}, {"logprobs", json::array{}}}));
    add(p.tail, "response.content_part.done", with({{"part", text_part(a.text())}}));
  } else {
    add(p.content, "response.function_call_arguments.delta",
        {{"item_id", id}, {"output_index", 0}, {"delta", "{}"}}, true);
    add(p.tail, "response.function_call_arguments.done",
        {{"item_id", id}, {"output_index", 0}, {"arguments", "{}"}});
  }
  const auto status = final_status(a);
  add(p.tail, "response.output_item.done",
      {{"output_index", 0},
       {"item", output_item(a, status == "incomplete" ? "incomplete" : "completed", true)}});
  add(p.terminator, status == "incomplete" ? "response.incomplete" : "response.completed",
      {{"response", response_object(a, status)}});
  return p;
}

ErrorReply error(ErrorKind kind, const ErrorContext& ctx) {
  return openai_dialect.error(kind, ctx);
}

std::vector<std::string_view> body_names(ErrorKind kind) {
  return openai_dialect.body_names(kind);
}

std::string models_body(std::string_view model) {
  return openai_dialect.models_body(model);
}

// A mid-stream failure: response.failed, the response carrying its error (the SDK's accumulator takes
// it as the final snapshot; codex-style clients read response.error).
SseFrame stream_error_frame(const Answer& a, std::size_t sequence) {
  auto response = response_object(a, "failed");
  const auto e = json::parse(error(ErrorKind::stream_interrupted, {}).body).at("error");
  response["error"] = json::object{{"code", e.at("type")}, {"message", e.at("message")}};
  return typed("response.failed", {{"response", std::move(response)}}, sequence);
}

SseFrame malformed_frame() {
  return {
      "event: response.output_text.delta\ndata: "
      "{\"type\":\"response.output_text.delta\",\"item_id\":\"msg_broken\","
      "\"output_index\":0,\"content_index\":0,\"delta\":\n\n",
      false};
}
// OpenAI's answer to a retrieve of an id it does not hold.
ErrorReply unknown_response(std::string_view id) {
  return {404, json::serialize(json::object{
                   {"error", json::object{{"message", fmt::format("Response with id '{}' not found.", id)},
                                          {"type", "invalid_request_error"},
                                          {"param", nullptr},
                                          {"code", nullptr}}}})};
}

constexpr std::string_view served_paths[] = {"POST /v1/responses", "GET /v1/responses/{id}",
                                             "GET /v1/models"};
constexpr Credential credentials[] = {
    {"authorization", "Bearer"}};  // OpenAI's platform, as for Chat Completions

// Every event is typed (`event:` and data.type): deltas are content, the *.done events close the output,
// response.completed / .incomplete end the stream, response.failed (and `error`) is a failure.
FrameRole frame_role(std::string_view event, const json::object& o) {
  const auto type = event_type(event, o);
  const auto ends_with = [&](std::string_view suffix) {
    return type.size() >= suffix.size() && type.substr(type.size() - suffix.size()) == suffix;
  };
  if (type == "response.completed" || type == "response.incomplete") return FrameRole::terminator;
  if (type == "response.failed" || type == "error") return FrameRole::injected;
  if (ends_with(".delta")) return FrameRole::content;
  if (ends_with(".done")) return FrameRole::closing;
  return FrameRole::structure;
}

// The response's id: a plain answer is the response object; a frame's data carries it as `response`
// (response.created, .in_progress, .completed, ...).
std::string response_id(std::string_view text) {
  if (const auto data = text.find("data:"); data != std::string_view::npos && text.substr(0, 1) != "{") {
    text.remove_prefix(data + 5);
    text = text.substr(0, text.find('\n'));
  }
  boost::system::error_code ec;
  const auto v = json::parse(text, ec);
  if (ec || !v.is_object()) return {};
  const auto* response = object_member(v.get_object(), "response");
  if (!response && str_member(v.get_object(), "object") == "response") response = &v.get_object();
  return response ? str_member(*response, "id") : std::string{};
}
}  // namespace

extern const DialectSpec responses_dialect = {
    .id = Dialect::responses,
    .request_id_header = "x-request-id",
    .id_prefix = "resp_",
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
    .unknown_response = unknown_response,
    .frame_role = frame_role,
    .response_id = response_id,
    .auth = {credentials, ""},
    .stores_responses = true,
};

}  // namespace llmchaos::mock
