#pragma once
// The HTTP/2 host: a connection protocol detection found to open with the h2c preface, handed with the
// bytes already read to ServerOptions::http2 (http2_hook.hpp), which serves it on the session's socket
// until it ends. Its streams are routed as HTTP/1.1 requests are (ServerCore).
#include <boost/asio/awaitable.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "request_reader.hpp"
#include "server_core.hpp"

namespace llmchaos::mock {

// Serves the connection over HTTP/2; the caller then closes it. `stopping`: the session's flag.
boost::asio::awaitable<void> serve_http2(ServerCore& server, boost::beast::tcp_stream& stream,
                                         const RequestReader& reader, const bool& stopping);

}  // namespace llmchaos::mock
