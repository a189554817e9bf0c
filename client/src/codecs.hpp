#pragma once
// The dialect codecs, one per file (codec_<dialect>.cpp); dialect_codec.cpp lists them in one table.
#include "llmchaos/client/dialect_codec.hpp"

namespace llmchaos::client::detail {
const DialectCodec& openai_codec();
const DialectCodec& anthropic_codec();
const DialectCodec& gemini_codec();
}  // namespace llmchaos::client::detail
