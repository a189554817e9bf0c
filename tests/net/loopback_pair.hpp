#pragma once
// Two connected loopback sockets on one io_context, for the net/ tests.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <string_view>

namespace llmchaos::test {

struct LoopbackPair {
  // By default one thread runs it, without the reactor's locks, as serve's and the proxy's with one I/O
  // thread.
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket reader{io}, writer{io};
  explicit LoopbackPair(int concurrency_hint = BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO) : io(concurrency_hint) {
    boost::asio::ip::tcp::acceptor acceptor(io, {boost::asio::ip::make_address("127.0.0.1"), 0});
    writer.connect(acceptor.local_endpoint());
    reader = acceptor.accept();
  }
  void write(std::string_view bytes) { boost::asio::write(writer, boost::asio::buffer(bytes)); }
  // Runs the reactor (epoll_wait included) for `d` with nothing else to do.
  void idle(std::chrono::milliseconds d) {
    boost::asio::steady_timer t(io, d);
    t.async_wait([](boost::system::error_code) {});
    io.restart();
    io.run_for(d + std::chrono::milliseconds(500));
  }
};

}  // namespace llmchaos::test
