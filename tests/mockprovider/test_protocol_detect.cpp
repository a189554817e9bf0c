// Protocol detection alone (mockprovider/serving/protocol_detect.hpp): the h2c preface, whole or in
// pieces, is HTTP/2; anything else is HTTP/1.1; every byte read stays in the buffer.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <string>

#include "llmchaos/mockprovider/http2_hook.hpp"
#include "protocol_detect.hpp"
#include "socket_pair.hpp"

using namespace llmchaos;
using namespace llmchaos::mock;
namespace net = boost::asio;

namespace {

struct Detected {
  DetectedProtocol protocol;
  std::string buffered;
};

// Writes `pieces` one by one (the server reads between them), then detects.
Detected detect(std::initializer_list<std::string_view> pieces, double idle_ms = 2000) {
  test::SocketPair pair;
  boost::beast::tcp_stream stream(std::move(pair.server));
  boost::beast::flat_buffer buffer;
  auto done = net::co_spawn(pair.ioc, detect_protocol(stream, buffer, idle_ms), net::use_future);
  for (const auto piece : pieces) {
    pair.send(piece);
    pair.ioc.run_for(std::chrono::milliseconds(20));
  }
  pair.ioc.run_for(std::chrono::milliseconds(50));
  REQUIRE(done.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  const auto data = buffer.data();
  return {done.get(), std::string(static_cast<const char*>(data.data()), data.size())};
}

}  // namespace

TEST_CASE("protocol detection: the whole preface is HTTP/2, the bytes after it kept") {
  const std::string preface(http2_preface);
  const auto got = detect({preface + std::string("\x00\x00\x00\x04", 4)});
  CHECK(got.protocol == DetectedProtocol::http2);
  CHECK(got.buffered.substr(0, preface.size()) == preface);
  CHECK(got.buffered.size() == preface.size() + 4);
}

TEST_CASE("protocol detection: a preface in pieces is read until whole") {
  const std::string_view preface = http2_preface;
  const auto got = detect({preface.substr(0, 3), preface.substr(3, 10), preface.substr(13)});
  CHECK(got.protocol == DetectedProtocol::http2);
  CHECK(got.buffered == preface);
}

TEST_CASE("protocol detection: an HTTP/1.1 request, or bytes that leave the preface, are HTTP/1.1") {
  const auto request = detect({"GET / HTTP/1.1\r\nhost: x\r\n\r\n"});
  CHECK(request.protocol == DetectedProtocol::http1);
  CHECK(request.buffered == "GET / HTTP/1.1\r\nhost: x\r\n\r\n");
  const auto diverging = detect({"PRI * HTTP/1.1\r\n\r\n"});
  CHECK(diverging.protocol == DetectedProtocol::http1);
  CHECK(diverging.buffered == "PRI * HTTP/1.1\r\n\r\n");
}

TEST_CASE("protocol detection: a connection that closes inside the preface is HTTP/1.1 (Beast ends it)") {
  test::SocketPair pair;
  boost::beast::tcp_stream stream(std::move(pair.server));
  boost::beast::flat_buffer buffer;
  auto done = net::co_spawn(pair.ioc, detect_protocol(stream, buffer, 2000), net::use_future);
  pair.send("PRI * HT");
  pair.client.close();
  pair.ioc.run_for(std::chrono::milliseconds(100));
  REQUIRE(done.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
  CHECK(done.get() == DetectedProtocol::http1);
  CHECK(buffer.size() == 8);
}
