#include "llmchaos/net/http_call.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <stdexcept>

namespace beast = boost::beast;
namespace http = beast::http;
namespace asio = boost::asio;
using tcp = asio::ip::tcp;

namespace llmchaos::net {

std::string HttpReply::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (beast::iequals(k, name)) return v;
  return {};
}

HttpReply http_call(const HttpCall& call) {
  asio::io_context ioc;
  beast::tcp_stream stream(ioc);
  const auto deadline = std::chrono::milliseconds(static_cast<long>(call.timeout_ms));
  beast::error_code ec;
  HttpReply reply;
  bool done = false;

  tcp::resolver resolver(ioc);
  auto endpoints = resolver.resolve(call.host, std::to_string(call.port), ec);
  if (ec) throw std::runtime_error(fmt::format("{}:{}: resolve: {}", call.host, call.port, ec.message()));

  http::request<http::string_body> req{http::string_to_verb(call.method), call.target, 11};
  req.set(http::field::host, fmt::format("{}:{}", call.host, call.port));
  req.set(http::field::connection, "close");
  for (const auto& [k, v] : call.headers) req.set(k, v);
  req.body() = call.body;
  req.prepare_payload();

  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(256ull * 1024 * 1024);
  std::string stage = "connect";

  stream.expires_after(deadline);
  stream.async_connect(endpoints, [&](beast::error_code e, const tcp::endpoint&) {
    if (e) {
      ec = e;
      return;
    }
    stage = "write";
    http::async_write(stream, req, [&](beast::error_code e2, std::size_t) {
      if (e2) {
        ec = e2;
        return;
      }
      stage = "read";
      http::async_read(stream, buffer, parser, [&](beast::error_code e3, std::size_t) {
        if (e3) {
          ec = e3;
          return;
        }
        done = true;
      });
    });
  });
  ioc.run();
  if (!done)
    throw std::runtime_error(fmt::format("{} {}:{}{}: {}: {}", call.method, call.host, call.port, call.target,
                                         stage, ec ? ec.message() : "no answer"));
  auto& res = parser.get();
  reply.status = static_cast<int>(res.result_int());
  for (const auto& f : res) {
    std::string name(f.name_string());
    std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
    reply.headers.emplace_back(std::move(name), std::string(f.value()));
  }
  reply.body = std::move(res.body());
  beast::error_code ignore;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignore);
  return reply;
}

namespace {
// A URL's port: decimal digits up to 65535 ("8080x", "70000" or "" name no port).
std::uint16_t url_port(const std::string& digits, const std::string& url) {
  if (digits.empty() || digits.size() > 5 || digits.find_first_not_of("0123456789") != std::string::npos ||
      std::stoul(digits) > 65535)
    throw std::runtime_error("bad port in URL: " + url);
  return static_cast<std::uint16_t>(std::stoul(digits));
}
}  // namespace

Url parse_url(const std::string& url) {
  const std::string scheme = "http://";
  if (url.rfind(scheme, 0) != 0) throw std::runtime_error("only http:// URLs are supported: " + url);
  std::string rest = url.substr(scheme.size());
  Url out;
  auto slash = rest.find('/');
  std::string hostport = rest.substr(0, slash);
  out.path = slash == std::string::npos ? "" : rest.substr(slash);
  if (!hostport.empty() && hostport.front() == '[') {  // [::1]:port
    auto close = hostport.find(']');
    if (close == std::string::npos) throw std::runtime_error("bad IPv6 host in URL: " + url);
    out.host = hostport.substr(1, close - 1);
    if (close + 1 < hostport.size() && hostport[close + 1] == ':')
      out.port = url_port(hostport.substr(close + 2), url);
  } else {
    auto colon = hostport.rfind(':');
    out.host = hostport.substr(0, colon);
    if (colon != std::string::npos) out.port = url_port(hostport.substr(colon + 1), url);
  }
  if (out.path.size() > 1 && out.path.back() == '/') out.path.pop_back();
  if (out.path == "/") out.path.clear();
  return out;
}

}  // namespace llmchaos::net
