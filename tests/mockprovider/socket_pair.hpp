#pragma once
// Two connected loopback TCP sockets on one io_context: a room of the server (the request reader,
// protocol detection) on `server`, the test's bytes written from `client`.
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <string_view>

namespace llmchaos::test {

struct SocketPair {
  boost::asio::io_context ioc;
  boost::asio::ip::tcp::socket client{ioc}, server{ioc};
  SocketPair() {
    using boost::asio::ip::tcp;
    tcp::acceptor acceptor(ioc, {boost::asio::ip::make_address("127.0.0.1"), 0});
    client.connect(acceptor.local_endpoint());
    server = acceptor.accept();
    server.non_blocking(true);
  }
  void send(std::string_view bytes) { boost::asio::write(client, boost::asio::buffer(bytes)); }
};

}  // namespace llmchaos::test
