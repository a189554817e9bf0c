#pragma once
// The Chat Completions request grammar, shared by the dialects that speak it (openai.cpp defines it;
// azure.cpp serves the same body behind Azure's routes).
#include <string_view>

#include "llmchaos/mockprovider/dialect.hpp"

namespace llmchaos::mock::detail {

// Reads a Chat Completions body (once the route check passed) into out.chat: stream, model,
// stream_options.include_usage, the tools offered, the rough input size and the last message's role;
// fills out.error when the body is not a JSON object.
void read_chat_completions(std::string_view body, ParsedRequest& out);

}  // namespace llmchaos::mock::detail
