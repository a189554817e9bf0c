#include "llmchaos/client/dialect_codec.hpp"

#include <stdexcept>
#include <string>

#include "codecs.hpp"

namespace llmchaos::client {

namespace {
struct CodecRow {
  Dialect dialect;
  const DialectCodec& (*codec)();
};
// The one table of dialects.
constexpr CodecRow codec_table[] = {
    {Dialect::openai, detail::openai_codec},
    {Dialect::anthropic, detail::anthropic_codec},
    {Dialect::gemini, detail::gemini_codec},
};
}  // namespace

const DialectCodec& codec_for(Dialect dialect) {
  for (const auto& row : codec_table)
    if (row.dialect == dialect) return row.codec();
  throw std::logic_error("no codec for dialect " + std::string(to_string(dialect)));
}

}  // namespace llmchaos::client
