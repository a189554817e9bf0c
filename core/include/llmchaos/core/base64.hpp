#pragma once
// Base64 (RFC 4648, the standard alphabet, padded): Bedrock's InvokeModelWithResponseStream carries each
// event's JSON as base64 in a `chunk` frame, and a cassette keeps a binary frame (an AWS event stream
// message) as base64 text. One codec for the writer and the reader.
#include <optional>
#include <string>
#include <string_view>

namespace llmchaos::base64 {

std::string encode(std::string_view bytes);

// The bytes of a padded base64 text; nullopt for a character outside the alphabet, a length that is not
// a multiple of 4, or padding anywhere but at the end.
std::optional<std::string> decode(std::string_view text);

}  // namespace llmchaos::base64
