// net::idle_socket_open on real loopback sockets: open while nothing is queued, closed once the peer's
// FIN, a reset or stray bytes are.
#include <catch2/catch.hpp>

#include "llmchaos/net/idle_socket.hpp"
#include "loopback_pair.hpp"

using llmchaos::idle_socket_open;

TEST_CASE("idle_socket_open: an idle open connection is open, one with its peer's FIN queued is not",
          "[net]") {
  llmchaos::test::LoopbackPair p;
  CHECK(idle_socket_open(p.reader.native_handle()));
  CHECK(idle_socket_open(p.reader.native_handle()));  // a peek takes nothing
  p.write("last bytes");
  p.writer.shutdown(boost::asio::ip::tcp::socket::shutdown_send);  // the FIN right behind them
  CHECK_FALSE(idle_socket_open(p.reader.native_handle()));         // bytes nobody asked for
  char buf[32];
  boost::system::error_code ec;
  CHECK(p.reader.read_some(boost::asio::buffer(buf), ec) == 10);
  CHECK_FALSE(idle_socket_open(p.reader.native_handle()));  // now only the FIN
}

TEST_CASE("idle_socket_open: a reset connection and a descriptor that is no socket are not open", "[net]") {
  llmchaos::test::LoopbackPair p;
  p.writer.set_option(boost::asio::socket_base::linger(true, 0));
  p.writer.close();  // linger 0: a reset
  CHECK_FALSE(idle_socket_open(p.reader.native_handle()));
  CHECK_FALSE(idle_socket_open(-1));
}
