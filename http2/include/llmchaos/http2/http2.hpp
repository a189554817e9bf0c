#pragma once
// HTTP/2 with prior knowledge (h2c) for the mock's server, over nghttp2 (README.md): set it as
// ServerOptions::http2 and a connection that opens with the client preface is served as HTTP/2, each
// stream through the same router, engine and plan as an HTTP/1.1 request. No nghttp2 type here.
#include <memory>

#include "llmchaos/mockprovider/server.hpp"

namespace llmchaos::http2 {

std::shared_ptr<mock::Http2Server> make_http2_server();

}  // namespace llmchaos::http2
