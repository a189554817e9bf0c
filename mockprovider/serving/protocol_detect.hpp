#pragma once
// Protocol detection: HTTP/1.1, or HTTP/2 with prior knowledge (h2c: `serve` has no TLS, so no ALPN),
// told by the client connection preface (http2_hook.hpp). Asked only for a connection's first request,
// and only when the fast head reader left it to Beast (a preface is no HTTP/1.1 head), so the HTTP/1.1 hot
// path pays nothing.
#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>

namespace llmchaos::mock {

enum class DetectedProtocol { http1, http2 };

// Reads until `buffer` starts with the whole preface (http2) or with bytes that are not one (http1);
// every byte read stays in `buffer`, for HTTP/2 or for Beast's parser. A failed read is http1: Beast's read
// then ends the connection as it would have. Each read is bounded by idle_ms.
boost::asio::awaitable<DetectedProtocol> detect_protocol(boost::beast::tcp_stream& stream,
                                                         boost::beast::flat_buffer& buffer, double idle_ms);

}  // namespace llmchaos::mock
