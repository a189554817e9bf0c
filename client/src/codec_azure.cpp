// Azure OpenAI: the Chat Completions body and answers (the openai codec's functions) behind Azure's
// route, as the `openai` SDK's AzureOpenAI client sends it: POST
// {endpoint}/openai/deployments/{deployment}/chat/completions?api-version=2024-10-21 with an `api-key`
// header. The deployment is the request's model (AzureOpenAI puts the `model` a call names in the path
// the same way); the route's base URL is the Azure endpoint (the resource's URL, or the mock's route
// URL). Azure's `prompt_filter_results` chunk (no choices) is ignored like any chunk without content.
#include "codec_detail.hpp"

namespace llmchaos::client::detail {

const DialectCodec& openai_codec();

namespace {

constexpr std::string_view api_version = "2024-10-21";

// A deployment name goes into the path as one segment: percent-encode anything but unreserved bytes.
std::string path_segment(std::string_view s) {
  static constexpr char hex[] = "0123456789ABCDEF";
  std::string out;
  for (const char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '.' ||
        c == '_' || c == '~') {
      out += ch;
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

std::string target(const AttemptRequest& req) {
  std::string t = "/openai/deployments/";
  t += path_segment(req.model);
  t += "/chat/completions?api-version=";
  t += api_version;
  return t;
}

Headers headers(const std::string& api_key) {
  return {{"api-key", api_key}};
}

}  // namespace

const DialectCodec& azure_codec() {
  const auto& chat = openai_codec();
  static const DialectCodec codec{Dialect::azure,    target,       headers, chat.request_body,
                                  chat.parse_answer, chat.on_event};
  return codec;
}

}  // namespace llmchaos::client::detail
