// DrainedReader (net/drained_read.hpp) on loopback sockets, held to socket.async_read_some: bytes there
// before the read, bytes that come after a short read, bytes that come while no read waits (the reactor's
// event consumed with nothing to perform: the next read must still find them), a read that fills its
// buffer, the end of the stream, cancellation by the socket and by a slot, the completion tokens the
// product uses, a reader destroyed with a read pending, and a seeded random exchange read both ways.
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <optional>
#include <random>
#include <string>

#include "llmchaos/net/drained_read.hpp"
#include "loopback_pair.hpp"

// Where the trick is compiled, every reader of an open socket watches for the peer's close.
#ifdef LLMCHAOS_DRAINED_READ
#define LLMCHAOS_DRAINED_READ_EXPECTED true
#else
#define LLMCHAOS_DRAINED_READ_EXPECTED false
#endif

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

using Pair = llmchaos::test::LoopbackPair;

struct Result {
  std::optional<boost::system::error_code> ec;
  std::size_t n = 0;
};

// One read into `buf` through `reader`; runs the context until it ends or `within` passes.
Result read_once(Pair& p, llmchaos::DrainedReader& reader, std::string& buf, std::size_t size,
                 std::chrono::milliseconds within = 2000ms) {
  Result r;
  buf.assign(size, '\0');
  reader.async_read_some(asio::buffer(buf), [&](boost::system::error_code ec, std::size_t n) {
    r.ec = ec;
    r.n = n;
  });
  p.io.restart();
  const auto until = std::chrono::steady_clock::now() + within;
  while (!r.ec && std::chrono::steady_clock::now() < until) p.io.run_one_for(within);
  buf.resize(r.n);
  return r;
}

// A read of bytes written just before: a short read, after which the socket counts as drained.
void read_short(Pair& p, llmchaos::DrainedReader& reader, std::string_view bytes) {
  p.write(bytes);
  std::string buf;
  REQUIRE(read_once(p, reader, buf, 64).ec == boost::system::error_code());
  REQUIRE(buf == bytes);
}

// The next read ends within `within` and brings `expected`.
void expect_read(Pair& p, llmchaos::DrainedReader& reader, std::string_view expected,
                 std::chrono::milliseconds within = 2000ms) {
  std::string buf;
  const auto r = read_once(p, reader, buf, 64, within);
  REQUIRE(r.ec == boost::system::error_code());  // never a wait for an event that already passed
  CHECK(buf == expected);
}

}  // namespace

TEST_CASE("drained read: bytes already there are read at once") {
  Pair p;
  llmchaos::DrainedReader reader(p.reader);
  p.write("hello");
  expect_read(p, reader, "hello");
}

TEST_CASE("drained read: after a short read, bytes that come later are read when they come") {
  Pair p;
  llmchaos::DrainedReader reader(p.reader);
  read_short(p, reader, "one");
  asio::steady_timer later(p.io, 30ms);
  later.async_wait([&](boost::system::error_code) { p.write("two"); });
  expect_read(p, reader, "two");
}

TEST_CASE("drained read: bytes that come while no read waits are still read by the next one") {
  Pair p;
  llmchaos::DrainedReader reader(p.reader);
  read_short(p, reader, "first");
  p.write("second");
  p.idle(50ms);  // epoll_wait reports the bytes with no read to perform
  expect_read(p, reader, "second", 1000ms);
}

TEST_CASE("drained read: a read that fills its buffer leaves the rest to the next, without new bytes") {
  Pair p;
  llmchaos::DrainedReader reader(p.reader);
  const std::string sent(100, 'x');
  p.write(sent);
  std::string got, buf;
  while (got.size() < sent.size()) {
    const auto r = read_once(p, reader, buf, 16, 1000ms);
    REQUIRE(r.ec == boost::system::error_code());
    got += buf;
  }
  CHECK(got == sent);
}

TEST_CASE("drained read: the end of the stream, after a short read and with nothing read before") {
  SECTION("after a short read") {
    Pair p;
    llmchaos::DrainedReader reader(p.reader);
    read_short(p, reader, "last");
    p.writer.close();
    std::string buf;
    CHECK(read_once(p, reader, buf, 64).ec == asio::error::eof);
  }
  SECTION("closed before the first read") {
    Pair p;
    llmchaos::DrainedReader reader(p.reader);
    p.writer.close();
    p.idle(20ms);
    std::string buf;
    CHECK(read_once(p, reader, buf, 64).ec == asio::error::eof);
  }
}

TEST_CASE("drained read: a FIN queued behind the last bytes ends the next read at once") {
  Pair p;
  llmchaos::DrainedReader reader(p.reader);
  REQUIRE(reader.watches_close() == LLMCHAOS_DRAINED_READ_EXPECTED);
  // The bytes and the FIN are both queued before the reactor looks: one event brings them.
  const auto send_last = [&] {
    p.write("last");
    p.writer.shutdown(tcp::socket::shutdown_send);
  };
  std::string buf;
  SECTION("the read waits when they come") {
    read_short(p, reader, "before");
    std::optional<boost::system::error_code> ec;
    std::size_t n = 0;
    buf.assign(64, '\0');
    reader.async_read_some(asio::buffer(buf), [&](boost::system::error_code e, std::size_t k) {
      ec = e;
      n = k;
    });
    p.io.restart();
    p.io.poll();  // the read waits on the reactor
    REQUIRE_FALSE(ec);
    send_last();
    while (!ec) p.io.run_one_for(2s);
    REQUIRE(*ec == boost::system::error_code());
    CHECK(buf.substr(0, n) == "last");
  }
  SECTION("they come while no read waits") {
    send_last();
    p.idle(20ms);  // epoll_wait reports them with no read to perform
    expect_read(p, reader, "last");
  }
  SECTION("they are there before the reactor ever looks") {
    send_last();
    expect_read(p, reader, "last");
  }
  const auto started = std::chrono::steady_clock::now();
  const auto r = read_once(p, reader, buf, 64, 1500ms);
  REQUIRE(r.ec);
  CHECK(*r.ec == asio::error::eof);
  CHECK(std::chrono::steady_clock::now() - started < 1000ms);
}

TEST_CASE(
    "drained read: on a reactor with its locks on it is the plain read, the FIN behind bytes included") {
  // Several threads may run such a reactor, and it stores a socket's events without a lock.
  Pair p(BOOST_ASIO_CONCURRENCY_HINT_DEFAULT);
  llmchaos::DrainedReader reader(p.reader);
  CHECK_FALSE(reader.watches_close());
  read_short(p, reader, "one");
  p.write("last");
  p.writer.shutdown(tcp::socket::shutdown_send);
  p.idle(20ms);
  expect_read(p, reader, "last");
  std::string buf;
  CHECK(read_once(p, reader, buf, 64, 1500ms).ec == asio::error::eof);
}

TEST_CASE("drained read: a waiting read is cancelled by the socket and by a cancellation slot") {
  Pair p;
  llmchaos::DrainedReader reader(p.reader);
  std::array<char, 32> buf{};
  SECTION("socket.cancel()") {
    std::optional<boost::system::error_code> got;
    reader.async_read_some(asio::buffer(buf), [&](boost::system::error_code ec, std::size_t) { got = ec; });
    asio::steady_timer t(p.io, 20ms);
    t.async_wait([&](boost::system::error_code) { p.reader.cancel(); });
    p.io.run_for(2s);
    REQUIRE(got);
    CHECK(*got == asio::error::operation_aborted);
  }
  SECTION("a slot") {
    asio::cancellation_signal signal;
    std::optional<boost::system::error_code> got;
    reader.async_read_some(asio::buffer(buf),
                           asio::bind_cancellation_slot(
                               signal.slot(), [&](boost::system::error_code ec, std::size_t) { got = ec; }));
    asio::steady_timer t(p.io, 20ms);
    t.async_wait([&](boost::system::error_code) { signal.emit(asio::cancellation_type::terminal); });
    p.io.run_for(2s);
    REQUIRE(got);
    CHECK(*got == asio::error::operation_aborted);
    // The socket still reads afterwards.
    p.write("after");
    expect_read(p, reader, "after");
  }
}

TEST_CASE("drained read: the tokens the product awaits with, and a race against a timer") {
  using namespace asio::experimental::awaitable_operators;
  Pair p;
  llmchaos::DrainedReader reader(p.reader);
  std::string first, raced;
  bool timer_won = false;
  auto body = [&]() -> asio::awaitable<void> {
    std::array<char, 64> buf{};
    p.write("deferred");
    auto [ec, n] = co_await reader.async_read_some(asio::buffer(buf), asio::as_tuple(asio::deferred));
    first.assign(buf.data(), ec ? 0 : n);
    asio::steady_timer timer(p.io, 30ms);
    auto won = co_await (reader.async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable)) ||
                         timer.async_wait(asio::as_tuple(asio::use_awaitable)));
    timer_won = won.index() == 1;  // nothing was sent: the read is cancelled, the timer ends the race
    p.write("awaitable");
    auto [ec2, n2] = co_await reader.async_read_some(asio::buffer(buf), asio::as_tuple(asio::use_awaitable));
    raced.assign(buf.data(), ec2 ? 0 : n2);
  };
  asio::co_spawn(p.io, body(), asio::detached);
  p.io.run_for(3s);
  CHECK(first == "deferred");
  CHECK(timer_won);
  CHECK(raced == "awaitable");
}

TEST_CASE("drained read: a context that ends with a read pending does not call it") {
  bool called = false;
  {
    Pair p;
    llmchaos::DrainedReader reader(p.reader);
    std::array<char, 8> buf{};
    reader.async_read_some(asio::buffer(buf), [&](boost::system::error_code, std::size_t) { called = true; });
    p.io.run_for(10ms);
  }
  CHECK_FALSE(called);
}

TEST_CASE("drained read: a seeded random exchange reads the same bytes as socket.async_read_some") {
  const auto seed = GENERATE(1u, 2u, 3u, 4u);
  // Pieces written in bursts, reads of random sizes, the reactor sometimes run with no read waiting.
  auto exchange = [&](bool drained) {
    Pair p;
    llmchaos::DrainedReader reader(p.reader);
    std::mt19937 rng(seed);
    std::string sent, got, buf;
    auto read_some = [&](std::size_t size) {
      buf.assign(size, '\0');
      std::optional<boost::system::error_code> ec;
      std::size_t n = 0;
      auto done = [&](boost::system::error_code e, std::size_t k) {
        ec = e;
        n = k;
      };
      if (drained)
        reader.async_read_some(asio::buffer(buf), done);
      else
        p.reader.async_read_some(asio::buffer(buf), done);
      p.io.restart();
      const auto until = std::chrono::steady_clock::now() + 2s;
      while (!ec && std::chrono::steady_clock::now() < until) p.io.run_one_for(2s);
      REQUIRE(ec == boost::system::error_code());  // never left waiting for bytes already there
      got.append(buf.data(), n);
    };
    for (int round = 0; round < 60; ++round) {
      const auto pieces = std::uniform_int_distribution<int>(0, 3)(rng);
      for (int i = 0; i < pieces; ++i) {
        std::string piece(std::uniform_int_distribution<std::size_t>(1, 3000)(rng), '\0');
        for (auto& c : piece) c = static_cast<char>('a' + rng() % 26);
        p.write(piece);
        sent += piece;
      }
      if (rng() % 3 == 0) p.idle(std::chrono::milliseconds(rng() % 3));
      const auto size = std::uniform_int_distribution<std::size_t>(1, 4096)(rng);
      if (got.size() < sent.size()) read_some(size);
    }
    while (got.size() < sent.size()) read_some(4096);
    CHECK(got == sent);
    return got;
  };
  CHECK(exchange(true) == exchange(false));
}
