#include "llmchaos/client/dialect_codec.hpp"

#include <stdexcept>
#include <string>

namespace llmchaos::client {

// Each defined in its own unit (codec_<dialect>.cpp); a codec names its own dialect.
namespace detail {
const DialectCodec& openai_codec();
const DialectCodec& anthropic_codec();
const DialectCodec& gemini_codec();
const DialectCodec& responses_codec();
const DialectCodec& azure_codec();
const DialectCodec& bedrock_codec();
}  // namespace detail

namespace {
// The one table of dialect codecs: to add one, its file and a line here (mockprovider/README.md).
constexpr const DialectCodec& (*codec_table[])() = {detail::openai_codec, detail::anthropic_codec,
                                                    detail::gemini_codec, detail::responses_codec,
                                                    detail::azure_codec,  detail::bedrock_codec};
}  // namespace

const DialectCodec& codec_for(Dialect dialect) {
  for (const auto codec : codec_table)
    if (codec().dialect == dialect) return codec();
  throw std::logic_error("no codec for dialect " + std::string(to_string(dialect)));
}

bool has_codec(Dialect dialect) {
  for (const auto codec : codec_table)
    if (codec().dialect == dialect) return true;
  return false;
}

Headers request_headers(const AttemptRequest& req, const std::string& api_key) {
  const DialectCodec& codec = codec_for(req.endpoint.dialect);
  Headers out = codec.headers(api_key);
  if (codec.attempt_headers)
    for (auto& h : codec.attempt_headers(req, api_key)) out.push_back(std::move(h));
  return out;
}

}  // namespace llmchaos::client
