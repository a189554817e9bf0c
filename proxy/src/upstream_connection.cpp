// An upstream's base URL and a connection to it (upstream_connection.hpp).
#include "upstream_connection.hpp"

#include <fmt/format.h>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/host_name_verification.hpp>
#include <boost/asio/ssl/stream.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <stdexcept>

#include "llmchaos/core/clock.hpp"

namespace net = boost::asio;
namespace beast = boost::beast;

namespace llmchaos::proxy {
namespace {
constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
}  // namespace

UpstreamUrl parse_upstream_url(const std::string& url) {
  const auto bad = [&](std::string_view why) {
    return std::invalid_argument(fmt::format("upstream URL \"{}\": {}", url, why));
  };
  UpstreamUrl u;
  std::string_view rest = url;
  if (rest.substr(0, 7) == "http://") {
    rest.remove_prefix(7);
  } else if (rest.substr(0, 8) == "https://") {
    u.tls = true;
    rest.remove_prefix(8);
  } else {
    throw bad("expected http:// or https://");
  }
  const auto slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  std::string_view path = slash == std::string_view::npos ? std::string_view{} : rest.substr(slash);
  if (authority.find('@') != std::string_view::npos) throw bad("credentials go in headers, not in the URL");
  if (path.find_first_of("?#") != std::string_view::npos) throw bad("no query or fragment in a base URL");
  if (!authority.empty() && authority.front() == '[') {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) throw bad("unclosed '[' in the host");
    u.host = std::string(authority.substr(1, close - 1));
    authority.remove_prefix(close + 1);
    if (!authority.empty() && authority.front() != ':') throw bad("expected ':' after the IPv6 address");
    if (!authority.empty()) u.port = std::string(authority.substr(1));
  } else {
    const auto colon = authority.find(':');
    u.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) u.port = std::string(authority.substr(colon + 1));
  }
  if (u.host.empty()) throw bad("no host");
  if (u.port.empty()) u.port = u.tls ? "443" : "80";
  if (u.port.find_first_not_of("0123456789") != std::string::npos || u.port.size() > 5 ||
      std::stoi(u.port) > 65535 || std::stoi(u.port) == 0)
    throw bad("the port must be 1-65535");
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  u.prefix = std::string(path);
  u.origin = fmt::format("{}://{}:{}", u.tls ? "https" : "http", u.host, u.port);
  const std::string host = u.host.find(':') != std::string::npos ? "[" + u.host + "]" : u.host;
  u.host_header = u.port == (u.tls ? "443" : "80") ? host : host + ":" + u.port;
  return u;
}

std::shared_ptr<net::ssl::context> make_tls_context(const std::string& ca_file) {
  auto ctx = std::make_shared<net::ssl::context>(net::ssl::context::tls_client);
  beast::error_code ec;
  ctx->set_default_verify_paths(ec);  // the system store (a missing one only means fewer trusted roots)
  if (!ca_file.empty()) {
    ctx->load_verify_file(ca_file, ec);
    if (ec)
      throw std::runtime_error(fmt::format("{}: cannot read the CA certificates: {}", ca_file, ec.message()));
  }
  ctx->set_verify_mode(net::ssl::verify_peer);
  return ctx;
}

net::awaitable<std::unique_ptr<UpstreamConnection>> connect_upstream(net::any_io_executor executor,
                                                                     const UpstreamUrl& url,
                                                                     net::ssl::context& tls,
                                                                     double timeout_ms, std::string& error) {
  auto c = std::make_unique<UpstreamConnection>();
  c->plain.emplace(executor);
  c->plain->expires_after(ms_duration(timeout_ms));
  // A numeric host (a local upstream, 127.0.0.1) is connected to at once: the resolver would hand the
  // lookup to its own thread and back, some tens of microseconds per request.
  beast::error_code numeric;
  const auto address = net::ip::make_address(url.host, numeric);
  beast::error_code cec;
  if (!numeric) {
    std::tie(cec) = co_await c->plain->async_connect(
        net::ip::tcp::endpoint(address, static_cast<unsigned short>(std::stoi(url.port))), use_tuple);
  } else {
    net::ip::tcp::resolver resolver(executor);
    auto [rec, found] = co_await resolver.async_resolve(url.host, url.port, use_tuple);
    if (rec) {
      error = fmt::format("cannot resolve {}: {}", url.host, rec.message());
      co_return nullptr;
    }
    net::ip::tcp::endpoint endpoint;
    std::tie(cec, endpoint) = co_await c->plain->async_connect(found, use_tuple);
  }
  if (cec) {
    error = fmt::format("cannot connect: {}", cec.message());
    co_return nullptr;
  }
  beast::error_code ignore;
  c->plain->socket().set_option(net::ip::tcp::no_delay(true), ignore);
  if (!url.tls) {
    c->plain->socket().non_blocking(true, ignore);  // send_request writes at once where the socket takes it
    c->reading.plain_reads = std::make_unique<PlainReads>(c->plain->socket());
    co_return c;
  }

  c->tls = std::make_unique<TlsStream>(std::move(*c->plain), tls);
  c->plain.reset();
  // SNI, and the certificate must name the host (RFC 6125), besides chaining to a trusted root.
  if (!SSL_set_tlsext_host_name(c->tls->native_handle(), url.host.c_str())) {
    error = "TLS: cannot set the server name";
    co_return nullptr;
  }
  c->tls->set_verify_callback(net::ssl::host_name_verification(url.host));
  beast::get_lowest_layer(*c->tls).expires_after(ms_duration(timeout_ms));
  auto [hec] = co_await c->tls->async_handshake(net::ssl::stream_base::client, use_tuple);
  if (hec) {
    error = fmt::format("TLS handshake failed: {}", hec.message());
    co_return nullptr;
  }
  co_return c;
}

void upstream_expires_after(beast::tcp_stream& stream, double ms) {
  stream.expires_after(ms_duration(ms));
}
void upstream_expires_after(TlsStream& stream, double ms) {
  beast::get_lowest_layer(stream).expires_after(ms_duration(ms));
}

}  // namespace llmchaos::proxy
