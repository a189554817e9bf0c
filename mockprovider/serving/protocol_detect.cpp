// HTTP/1.1 or h2c (protocol_detect.hpp).
#include "protocol_detect.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <string_view>

#include "llmchaos/core/clock.hpp"
#include "llmchaos/mockprovider/http2_hook.hpp"

namespace net = boost::asio;

namespace llmchaos::mock {

net::awaitable<DetectedProtocol> detect_protocol(boost::beast::tcp_stream& stream,
                                                 boost::beast::flat_buffer& buffer, double idle_ms) {
  for (;;) {
    const auto data = buffer.data();
    const auto match =
        match_http2_preface(std::string_view(static_cast<const char*>(data.data()), data.size()));
    if (match == PrefaceMatch::whole) co_return DetectedProtocol::http2;
    if (match == PrefaceMatch::no) co_return DetectedProtocol::http1;
    stream.expires_after(ms_duration(idle_ms));
    auto [ec, n] = co_await stream.async_read_some(buffer.prepare(4096), net::as_tuple(net::use_awaitable));
    if (ec) co_return DetectedProtocol::http1;
    buffer.commit(n);
  }
}

}  // namespace llmchaos::mock
