// The request reader alone (mockprovider/serving/request_reader.hpp) over a loopback socket pair: the
// fast way and Beast's parser give a request, a rejection with its status and event, HTTP/2 or an end.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_future.hpp>
#include <catch2/catch.hpp>
#include <optional>
#include <string>

#include "llmchaos/mockprovider/http2_hook.hpp"
#include "request_reader.hpp"
#include "socket_pair.hpp"

using namespace llmchaos;
using namespace llmchaos::mock;
namespace net = boost::asio;
using Kind = ReadResult::Kind;

namespace {

// A result with its rejected target copied (a view of the reader's own otherwise).
struct Read {
  ReadResult result;
  std::string target;
};

// The session's steps (session.cpp's run): buffered, the wait's reads, then read_rest.
net::awaitable<Read> read_one(RequestReader& reader, RawRequest& req, bool first) {
  ReadResult got = reader.buffered(req);
  while (reader.waits_for_bytes(got)) {
    auto [ec, n] = co_await reader.more_bytes();
    got = reader.took(req, ec, n);
  }
  if (got.kind == Kind::pending) got = co_await reader.read_rest(req, first);
  co_return Read{got, std::string(got.target)};
}

struct ReaderWorld {
  test::SocketPair pair;
  boost::beast::tcp_stream stream{std::move(pair.server)};
  bool stopping = false;
  RequestReader reader;
  RawRequest req;
  explicit ReaderWorld(ReaderOptions options) : reader(stream, options, stopping) {}

  // Sends `bytes` (unless empty), closes the client when asked, and reads one request.
  Read read(std::string_view bytes, bool close_after = false, bool first = true) {
    if (!bytes.empty()) pair.send(bytes);
    if (close_after) pair.client.shutdown(net::ip::tcp::socket::shutdown_send);
    auto done = net::co_spawn(pair.ioc, read_one(reader, req, first), net::use_future);
    pair.ioc.restart();
    pair.ioc.run_for(std::chrono::milliseconds(500));
    REQUIRE(done.wait_for(std::chrono::seconds(0)) == std::future_status::ready);
    return done.get();
  }
};

ReaderOptions options(double idle_ms = 2000) {
  ReaderOptions o;
  o.limits.body_limit = 64;
  o.idle_ms = idle_ms;
  return o;
}

}  // namespace

TEST_CASE("request reader: the fast way and Beast's keep the headers the router keeps, Host of admin only") {
  // Content-Length: the fast way; chunked: Beast's parser.
  for (const std::string_view body :
       {"Content-Length: 2\r\n\r\n{}", "Transfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n"}) {
    ReaderWorld w(options());
    const auto got = w.read(
        "POST /r/v1/chat/completions HTTP/1.1\r\nHost: x\r\nX-Request-Id: abc\r\n"
        "User-Agent: t\r\n" +
        std::string(body));
    REQUIRE(got.result.kind == Kind::request);
    CHECK(got.result.keep_alive);
    CHECK(w.req.method == "POST");
    CHECK(w.req.target == "/r/v1/chat/completions");
    CHECK(w.req.body == "{}");
    CHECK(w.req.header("x-request-id") == "abc");
    CHECK(w.req.header("user-agent").empty());
    CHECK(w.req.header("host").empty());  // read for admin targets only
    ReaderWorld admin(options());
    const auto admin_got = admin.read("POST /__llmchaos/x HTTP/1.1\r\nHost: h\r\n" + std::string(body));
    REQUIRE(admin_got.result.kind == Kind::request);
    CHECK(admin.req.header("host") == "h");
  }
}

TEST_CASE("request reader: pipelined requests, the second from the buffer; Connection: close is kept") {
  ReaderWorld w(options());
  const auto first = w.read("GET /a HTTP/1.1\r\n\r\nGET /b HTTP/1.1\r\nConnection: close\r\n\r\n");
  REQUIRE(first.result.kind == Kind::request);
  CHECK(w.req.target == "/a");
  const auto second = w.reader.buffered(w.req);
  REQUIRE(second.kind == Kind::request);
  CHECK(w.req.target == "/b");
  CHECK_FALSE(second.keep_alive);
}

TEST_CASE("request reader: a proxy's reader keeps every header") {
  auto o = options();
  o.limits.keep_all_headers = true;
  o.headers_kept.every = true;
  ReaderWorld w(o);
  const auto got = w.read("GET /x HTTP/1.1\r\nUser-Agent: t\r\nX-Custom: 1\r\n\r\n");
  REQUIRE(got.result.kind == Kind::request);
  CHECK(w.req.header("user-agent") == "t");
  CHECK(w.req.header("x-custom") == "1");
}

TEST_CASE("request reader: over a limit is a rejection with its status, event and target") {
  ReaderWorld w(options());
  const auto body = w.read("POST /r/v1/x HTTP/1.1\r\nContent-Length: 100\r\n\r\n" + std::string(100, 'a'));
  REQUIRE(body.result.kind == Kind::rejected);
  CHECK(body.result.status == 413);
  CHECK(body.result.event == "body_too_large");
  CHECK(body.target == "/r/v1/x");

  auto small = options();
  small.limits.header_limit = 64;
  ReaderWorld url(small);
  const auto long_url = url.read("GET /" + std::string(200, 'u') + " HTTP/1.1\r\n\r\n");
  REQUIRE(long_url.result.kind == Kind::rejected);
  CHECK(long_url.result.status == 414);
  CHECK(long_url.result.event == "uri_too_long");

  ReaderWorld bad(options());
  const auto garbage = bad.read("GET / HTTP/9.9\r\n\r\n");
  REQUIRE(garbage.result.kind == Kind::rejected);
  CHECK(garbage.result.status == 400);
  CHECK(garbage.result.event == "bad_http");
}

TEST_CASE("request reader: a client that leaves is an end without an event; silence is an idle timeout") {
  ReaderWorld left(options());
  const auto gone = left.read({}, true);
  CHECK(gone.result.kind == Kind::end);
  CHECK(gone.result.event.empty());

  ReaderWorld idle(options(50));
  const auto timed_out = idle.read({});
  CHECK(timed_out.result.kind == Kind::end);
  CHECK(timed_out.result.event == "idle_timeout");
}

TEST_CASE("request reader: the h2c preface on a first request is HTTP/2 when detected, else Beast's 400") {
  auto o = options();
  o.detect_http2 = true;
  ReaderWorld h2(o);
  const auto got = h2.read(http2_preface);
  CHECK(got.result.kind == Kind::http2);
  CHECK(h2.reader.received() == http2_preface);

  ReaderWorld h1(options());
  const auto plain = h1.read(http2_preface);
  REQUIRE(plain.result.kind == Kind::rejected);
  CHECK(plain.result.status == 400);
}
