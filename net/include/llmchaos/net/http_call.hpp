#pragma once
// A small blocking HTTP/1.1 call with a deadline, for admin requests, tests and tools.
// No Beast types in this header: it is included widely.
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace llmchaos::net {

struct HttpReply {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // names lower-cased
  std::string body;
  std::string header(std::string_view name) const;  // "" when absent
};

struct HttpCall {
  std::string host = "127.0.0.1";
  std::uint16_t port = 0;
  std::string method = "GET";
  std::string target = "/";
  std::string body;
  std::vector<std::pair<std::string, std::string>> headers;
  double timeout_ms = 10000;
};

// Throws std::runtime_error naming host:port and target on connect / timeout / protocol errors.
HttpReply http_call(const HttpCall& call);

// "http://host:port/prefix" -> parts. Throws on anything but plain http.
struct Url {
  std::string host;
  std::uint16_t port = 80;
  std::string path;  // "" or "/..."
};
Url parse_url(const std::string& url);

}  // namespace llmchaos::net
