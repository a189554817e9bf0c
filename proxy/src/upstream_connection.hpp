#pragma once
// Private to the proxy: an upstream's base URL and a connection to it. Beast types: never include it
// from a public header.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "answer_head.hpp"
#include "llmchaos/net/read_deadline.hpp"
#include "upstream_response.hpp"

namespace llmchaos::proxy {

// "http://host[:port][/prefix]" or "https://...". The request's path below its route is appended to prefix.
struct UpstreamUrl {
  bool tls = false;
  std::string host;
  std::string port;
  std::string prefix;  // "" or "/..." without a trailing '/'
  // Made once by parse_upstream_url (each is read on every proxied request):
  std::string origin;       // "http://host:port": the pool's key, and messages (no credentials here)
  std::string host_header;  // host, with :port unless it is the scheme's default
};

// Throws std::invalid_argument naming the URL when it is not http(s)://host[:port][/path] (no user info,
// no query).
UpstreamUrl parse_upstream_url(const std::string& url);

using TlsStream = boost::beast::ssl_stream<boost::beast::tcp_stream>;

// A plain connection's reads: bounded by a deadline (no timer operation per read); each read is the
// socket's own async_read_some.
struct PlainReads {
  explicit PlainReads(boost::asio::ip::tcp::socket& socket) : deadline(socket), socket(socket) {}
  ReadDeadline deadline;
  boost::asio::ip::tcp::socket& socket;
};

// What an exchange needs (the request head written, the answer read), kept with the connection: a
// kept-alive connection carries many exchanges, and these keep their memory from one to the next (no
// allocation per exchange).
struct UpstreamReading {
  boost::beast::flat_buffer buffer;
  UpstreamHead head;
  detail::AnswerHead answer;  // the answer's head as delivered, filled in place (its strings reused)
  std::string request_head;   // the request's head as sent (request_head())
  // A plain connection's reads (PlainReads); null on TLS, whose reads the TCP stream's expires_after
  // bounds (upstream_expires_after).
  std::unique_ptr<PlainReads> plain_reads;
};

struct UpstreamConnection {
  std::optional<boost::beast::tcp_stream> plain;  // http://
  std::unique_ptr<TlsStream> tls;                 // https:// (the TCP stream moved in)
  UpstreamReading reading;                        // declared after the streams: its deadline goes first
};

// The client context of TLS upstreams: peers verified against the system store, plus the PEM
// certificates of `ca_file` when given (throws std::runtime_error naming the file when it cannot be read).
std::shared_ptr<boost::asio::ssl::context> make_tls_context(const std::string& ca_file);

// Resolves, connects and (https) completes the TLS handshake, checking the certificate against the
// context and the URL's host, within timeout_ms; on failure null, and `error` says why.
boost::asio::awaitable<std::unique_ptr<UpstreamConnection>> connect_upstream(
    boost::asio::any_io_executor executor, const UpstreamUrl& url, boost::asio::ssl::context& tls,
    double timeout_ms, std::string& error);

void upstream_expires_after(boost::beast::tcp_stream& stream, double ms);
void upstream_expires_after(TlsStream& stream, double ms);

}  // namespace llmchaos::proxy
