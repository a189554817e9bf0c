#pragma once
// The gateway's client-facing wire: OpenAI Chat Completions requests in; answers, stream chunks and
// errors out in OpenAI's shapes ({"error": {"message", "type", "param", "code"}}).
#include <optional>
#include <string>
#include <string_view>

#include "llmchaos/client/executor.hpp"

namespace llmchaos::gateway {

struct WireError {
  int status = 400;
  std::string message;
  std::string type = "invalid_request_error";
  std::string param;  // "" -> null
  std::string code;   // "" -> null
};

struct ChatRequest {
  client::WorkflowRequest workflow;  // model, prompt (the last user message), stream, tool_call, prefill
  int max_tokens = 0;                // charged to the tokens-per-minute bucket up front
};

// nullopt + `error` filled when the body is not a chat completion request.
std::optional<ChatRequest> parse_chat_request(std::string_view body, WireError& error);

std::string error_body(const WireError& e);

// What identifies one answer in every chunk of it.
struct AnswerId {
  std::string id;  // "chatcmpl-..."
  long created = 0;
  std::string model;
};

std::string completion_body(const AnswerId& id, const client::DecisionLog& log);
// One SSE frame "data: {...}\n\n": a content delta (role on the first), the finish, the usage + the
// gateway's final decision (`llmchaos` object), the [DONE] sentinel, an in-stream error.
std::string content_frame(const AnswerId& id, std::string_view token, bool first);
std::string finish_frame(const AnswerId& id, std::string_view finish_reason);
std::string usage_frame(const AnswerId& id, const client::DecisionLog& log, std::string_view action,
                        int attempts);
std::string done_frame();
std::string error_frame(const WireError& e);

}  // namespace llmchaos::gateway
