// The cassette key: a stable hash of the normalised request (cassette.hpp). Pure functions.
#include <fmt/format.h>
#include <openssl/evp.h>

#include <algorithm>
#include <array>
#include <boost/json.hpp>

#include "llmchaos/proxy/cassette.hpp"
#include "llmchaos/proxy/proxy.hpp"

namespace json = boost::json;

namespace llmchaos::proxy {
namespace {

// The members of a request body that shape the answer, in every dialect.
constexpr std::string_view shaping_members[] = {
    "contents", "input",          "instructions", "messages",          "model",
    "stream",   "stream_options", "system",       "systemInstruction", "tools"};

// The path with its query, less the credential parameters (Gemini's key=): `alt=sse` shapes the answer.
std::string path_without_keys(std::string_view path) {
  const auto q = path.find('?');
  std::string out(path.substr(0, q));
  if (q == std::string_view::npos) return out;
  std::string_view query = path.substr(q + 1);
  char sep = '?';
  while (!query.empty()) {
    const auto amp = query.find('&');
    const auto param = query.substr(0, amp);
    const auto name = param.substr(0, param.find('='));
    if (!secret_query_param(name) && !param.empty()) {
      out += sep;
      out += param;
      sep = '&';
    }
    if (amp == std::string_view::npos) break;
    query.remove_prefix(amp + 1);
  }
  return out;
}

// Sorted members, recursively: the same request gives the same text whatever order its members came in.
json::value sorted(const json::value& v) {
  if (const auto* o = v.if_object()) {
    std::vector<std::string_view> names;
    for (const auto& m : *o) names.push_back(m.key());
    std::sort(names.begin(), names.end());
    json::object out;
    for (auto name : names) out.emplace(name, sorted(o->at(name)));
    return out;
  }
  if (const auto* a = v.if_array()) {
    json::array out;
    for (const auto& e : *a) out.push_back(sorted(e));
    return out;
  }
  return v;
}

}  // namespace

std::string normalised_request(Dialect dialect, std::string_view method, std::string_view path,
                               std::string_view body) {
  json::object out;
  out["dialect"] = to_string(dialect);
  out["method"] = method;
  out["path"] = path_without_keys(path);
  boost::system::error_code ec;
  json::parse_options options;
  options.max_depth = 64;
  const auto parsed = json::parse(body, ec, {}, options);
  if (!ec && parsed.is_object()) {
    json::object kept;
    for (auto name : shaping_members)
      if (const auto* m = parsed.as_object().if_contains(name)) kept[name] = sorted(*m);
    out["request"] = std::move(kept);
  } else {
    out["body"] = body;
  }
  return json::serialize(sorted(out));
}

std::string cassette_key(Dialect dialect, std::string_view method, std::string_view path,
                         std::string_view body) {
  const auto text = normalised_request(dialect, method, path, body);
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  unsigned int size = 0;
  EVP_Digest(text.data(), text.size(), digest.data(), &size, EVP_sha256(), nullptr);
  std::string hex;
  for (unsigned int i = 0; i < size; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

std::string cassette_file_name(std::string_view key) {
  return std::string(key) + std::string(cassette_suffix);
}

}  // namespace llmchaos::proxy
