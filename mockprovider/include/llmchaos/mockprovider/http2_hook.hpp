#pragma once
// The server's one seam toward HTTP/2 (http2/: llmchaos::http2, over nghttp2, wired in by app/ when CMake
// found it): a connection whose first bytes are the client connection preface (HTTP/2 with prior
// knowledge, h2c: `serve` has no TLS, so no ALPN) is handed over, with the bytes already read, to the
// Http2Server of ServerOptions, which serves it on the session's socket through Http2Host. Without one
// (or with a forwarder) the preface is read as HTTP/1.1, as before (a 400). The HTTP/1.1 hot path pays
// nothing: the preface is looked for only where the fast head reader gave a connection's first request
// to Beast. Asio types: include it only from sources.
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <optional>
#include <string_view>

#include "llmchaos/mockprovider/hold_slot.hpp"
#include "llmchaos/mockprovider/router.hpp"
#include "llmchaos/mockprovider/server.hpp"

namespace llmchaos::mock {

inline constexpr std::string_view http2_preface = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

enum class PrefaceMatch { no, partial, whole };

// Whether a connection's first bytes start with the whole preface, are a part of it so far (partial:
// read more), or are something else.
constexpr PrefaceMatch match_http2_preface(std::string_view in) {
  const auto n = in.size() < http2_preface.size() ? in.size() : http2_preface.size();
  if (in.substr(0, n) != http2_preface.substr(0, n)) return PrefaceMatch::no;
  return n == http2_preface.size() ? PrefaceMatch::whole : PrefaceMatch::partial;
}

// What an HTTP/2 connection uses of the server's session that found the preface (serving/http2_host.cpp).
class Http2Host {
 public:
  virtual ~Http2Host() = default;
  virtual boost::asio::ip::tcp::socket& socket() = 0;
  virtual std::string_view received() const = 0;  // the bytes read so far, the preface first
  virtual const ServerOptions& options() const = 0;
  virtual Engine& engine() = 0;
  virtual bool stopping() const = 0;  // the server is stopping: every wait ends
  // A request through the router as an HTTP/1.1 one goes (an admin extension's on its own pool). The
  // request's buffers come back in `req`.
  virtual boost::asio::awaitable<Routed> route_request(RawRequest& req) = 0;
  // The router's answer to a request not read whole (Router::reject): 413, 431.
  virtual Plan reject(std::string_view target, int status) const = 0;
  // A hold takes one of the server's hold slots; with none left `routed` becomes the 503 answer.
  virtual void take_hold_slot(std::optional<HoldSlot>& slot, Routed& routed, std::string_view target) = 0;
};

class Http2Server {
 public:
  virtual ~Http2Server() = default;
  // Serves the connection until it ends (the client leaves, idle timeout, a reset plan's GOAWAY, the
  // server stopping); every stream's ledger entry is finished before it returns. The caller then closes
  // the socket.
  virtual boost::asio::awaitable<void> serve(Http2Host& host) = 0;
};

}  // namespace llmchaos::mock
