#pragma once
// What a non-blocking socket takes at once, without a composed operation or a coroutine frame: one pass
// through Asio's scheduler less per write. A full socket is not an error (0 bytes, `ec` clear); the
// caller writes the rest by a composed write. Used by serve's session and by the proxy's upstream.
// In namespace llmchaos, not llmchaos::net: files alias boost::asio as `net` inside llmchaos.
#include <boost/asio/error.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cstddef>

namespace llmchaos {

template <class ConstBuffers>
std::size_t write_now(boost::asio::ip::tcp::socket& socket, const ConstBuffers& buffers,
                      boost::system::error_code& ec) {
  const std::size_t sent = socket.write_some(buffers, ec);
  if (ec == boost::asio::error::would_block || ec == boost::asio::error::try_again) ec = {};
  return ec ? 0 : sent;
}

}  // namespace llmchaos
