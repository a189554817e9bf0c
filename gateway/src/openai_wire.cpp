#include "openai_wire.hpp"

#include <fmt/format.h>

#include <boost/json.hpp>

#include "llmchaos/client/dialect_codec.hpp"

namespace json = boost::json;

namespace llmchaos::gateway {
namespace {

json::value null_or(const std::string& s) {
  return s.empty() ? json::value(nullptr) : json::value(s);
}

// A message's content: a string, or OpenAI's array of parts ({"type": "text", "text": ...}).
std::optional<std::string> content_text(const json::value& content) {
  if (content.is_null()) return std::string();
  if (content.is_string()) return std::string(content.as_string());
  if (!content.is_array()) return std::nullopt;
  std::string out;
  for (const auto& part : content.as_array()) {
    const auto* o = part.if_object();
    if (!o) return std::nullopt;
    if (const auto* t = o->if_contains("text"); t && t->is_string()) out += std::string(t->as_string());
  }
  return out;
}

std::string frame(const json::value& v) {
  return "data: " + json::serialize(v) + "\n\n";
}

json::object chunk_head(const AnswerId& id) {
  return {{"id", id.id}, {"object", "chat.completion.chunk"}, {"created", id.created}, {"model", id.model}};
}

}  // namespace

std::optional<ChatRequest> parse_chat_request(std::string_view body, WireError& error) {
  auto fail = [&](std::string message, std::string param) {
    error = WireError{400, std::move(message), "invalid_request_error", std::move(param), ""};
    return std::nullopt;
  };
  boost::system::error_code ec;
  auto v = json::parse(body, ec);
  if (ec) return fail(fmt::format("the body is not valid JSON ({})", ec.message()), "");
  const auto* o = v.if_object();
  if (!o) return fail("the body must be a JSON object", "");
  ChatRequest r;
  const auto* model = o->if_contains("model");
  if (!model || !model->is_string() || model->as_string().empty())
    return fail("'model' must be a non-empty string", "model");
  r.workflow.model = std::string(model->as_string());
  const auto* messages = o->if_contains("messages");
  if (!messages || !messages->is_array() || messages->as_array().empty())
    return fail("'messages' must be a non-empty array", "messages");
  std::optional<std::string> prompt;
  std::string last_role;
  for (std::size_t i = 0; i < messages->as_array().size(); ++i) {
    const auto* m = messages->as_array()[i].if_object();
    const auto* role = m ? m->if_contains("role") : nullptr;
    if (!role || !role->is_string())
      return fail(fmt::format("messages[{}] needs a string 'role'", i), fmt::format("messages[{}].role", i));
    last_role = std::string(role->as_string());
    const auto* content = m->if_contains("content");
    auto text = content ? content_text(*content) : std::optional<std::string>(std::string());
    if (!text)
      return fail(fmt::format("messages[{}].content must be a string or an array of text parts", i),
                  fmt::format("messages[{}].content", i));
    if (last_role == "user") prompt = *text;
  }
  if (!prompt) return fail("'messages' has no user message", "messages");
  r.workflow.prompt = *prompt;
  // The last message from the assistant is a prefill (a capability some routes lack).
  r.workflow.prefill = last_role == "assistant";
  if (const auto* s = o->if_contains("stream")) {
    if (!s->is_bool()) return fail("'stream' must be a boolean", "stream");
    r.workflow.stream = s->as_bool();
  }
  // Offering the workflow's tool makes it a tool-call workflow: the gateway runs the tool leg.
  if (const auto* tools = o->if_contains("tools")) {
    if (!tools->is_array()) return fail("'tools' must be an array", "tools");
    for (const auto& t : tools->as_array()) {
      const auto* name = t.is_object() ? t.as_object().if_contains("function") : nullptr;
      name = name && name->is_object() ? name->as_object().if_contains("name") : nullptr;
      if (name && name->is_string() && name->as_string() == client::workflow_tool_name)
        r.workflow.tool_call = true;
    }
  }
  for (const char* key : {"max_tokens", "max_completion_tokens"})
    if (const auto* m = o->if_contains(key)) {
      if (!m->is_int64() || m->as_int64() < 1)
        return fail(fmt::format("'{}' must be a positive integer", key), key);
      r.max_tokens = static_cast<int>(std::min<std::int64_t>(m->as_int64(), 1'000'000));
    }
  return r;
}

std::string error_body(const WireError& e) {
  json::object err{
      {"message", e.message}, {"type", e.type}, {"param", null_or(e.param)}, {"code", null_or(e.code)}};
  return json::serialize(json::object{{"error", std::move(err)}});
}

std::string completion_body(const AnswerId& id, const client::DecisionLog& log) {
  json::object message{{"role", "assistant"}, {"content", log.text}};
  json::object usage{{"prompt_tokens", log.input_tokens},
                     {"completion_tokens", log.output_tokens},
                     {"total_tokens", log.input_tokens + log.output_tokens}};
  json::object body{
      {"id", id.id},
      {"object", "chat.completion"},
      {"created", id.created},
      {"model", log.model.empty() ? id.model : log.model},
      {"choices",
       json::array{json::object{{"index", 0}, {"message", std::move(message)}, {"finish_reason", "stop"}}}},
      {"usage", std::move(usage)}};
  return json::serialize(body);
}

std::string content_frame(const AnswerId& id, std::string_view token, bool first) {
  json::object delta{{"content", token}};
  if (first) delta["role"] = "assistant";
  auto o = chunk_head(id);
  o["choices"] =
      json::array{json::object{{"index", 0}, {"delta", std::move(delta)}, {"finish_reason", nullptr}}};
  return frame(o);
}

std::string finish_frame(const AnswerId& id, std::string_view finish_reason) {
  auto o = chunk_head(id);
  o["choices"] =
      json::array{json::object{{"index", 0}, {"delta", json::object{}}, {"finish_reason", finish_reason}}};
  return frame(o);
}

std::string usage_frame(const AnswerId& id, const client::DecisionLog& log, std::string_view action,
                        int attempts) {
  auto o = chunk_head(id);
  if (!log.model.empty()) o["model"] = log.model;
  o["choices"] = json::array{};
  o["usage"] = json::object{{"prompt_tokens", log.input_tokens},
                            {"completion_tokens", log.output_tokens},
                            {"total_tokens", log.input_tokens + log.output_tokens}};
  // The final decision (a stream's headers went out with the first token, before it was known).
  o["llmchaos"] = json::object{{"action", action}, {"attempts", attempts}, {"route", log.route}};
  return frame(o);
}

std::string done_frame() {
  return "data: [DONE]\n\n";
}

std::string error_frame(const WireError& e) {
  return "data: " + error_body(e) + "\n\n";
}

}  // namespace llmchaos::gateway
