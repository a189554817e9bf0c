#pragma once
// What the ledger may keep of a request target: a credential in its query (Gemini's `key=`, an
// `api-key=` or `access_token=`) is replaced, wherever a client put it.
#include <string>
#include <string_view>

namespace llmchaos {

inline constexpr std::string_view redacted_value = "REDACTED";

// `target` with the value of every credential query parameter (key, api_key, api-key, apikey,
// x-api-key, access_token, authorization; names compared without case) replaced by redacted_value.
std::string without_credentials(std::string_view target);

}  // namespace llmchaos
