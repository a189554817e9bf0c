// ReadDeadline (net/read_deadline.hpp) on a loopback socket pair: a read past its deadline is cancelled
// and says so, a read within it is not, re-arming moves the deadline without cancelling, a shorter
// timeout than the pending wait's still fires on time, and the object can go while its timer waits.
#include <array>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/write.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <memory>

#include "llmchaos/net/read_deadline.hpp"
#include "loopback_pair.hpp"

namespace asio = boost::asio;
using tcp = asio::ip::tcp;
using namespace std::chrono_literals;

namespace {

using Pair = llmchaos::test::LoopbackPair;

// Starts one read under `deadline` armed with `timeout`; `done` gets its error and when it ended.
struct Read {
  boost::system::error_code ec;
  bool ended = false;
  std::chrono::steady_clock::duration took{};
};
void start_read(Pair& p, llmchaos::ReadDeadline& deadline, std::chrono::milliseconds timeout,
                std::array<char, 16>& buf, Read& out) {
  const auto t0 = std::chrono::steady_clock::now();
  deadline.arm(timeout);
  p.reader.async_read_some(asio::buffer(buf), [&, t0](boost::system::error_code ec, std::size_t) {
    deadline.disarm();
    out = {ec, true, std::chrono::steady_clock::now() - t0};
  });
}

}  // namespace

TEST_CASE("a read past its deadline is cancelled and timed_out() says so", "[read_deadline]") {
  Pair p;
  llmchaos::ReadDeadline deadline(p.reader);
  std::array<char, 16> buf{};
  Read r;
  start_read(p, deadline, 50ms, buf, r);
  p.io.run_for(2s);
  REQUIRE(r.ended);
  CHECK(r.ec == asio::error::operation_aborted);
  CHECK(deadline.timed_out());
  CHECK(r.took >= 45ms);
  CHECK(r.took < 1s);
}

TEST_CASE("reads within their deadline are not cancelled, however many re-arm it", "[read_deadline]") {
  Pair p;
  llmchaos::ReadDeadline deadline(p.reader);
  std::array<char, 16> buf{};
  for (int i = 0; i < 20; ++i) {  // 20 x 5 ms of reads, each well within its 400 ms (a loaded CI machine)
    Read r;
    start_read(p, deadline, 400ms, buf, r);
    asio::steady_timer later(p.io, 5ms);
    later.async_wait([&](boost::system::error_code) { asio::write(p.writer, asio::buffer("x", 1)); });
    while (!r.ended) p.io.run_one_for(1s);
    CHECK_FALSE(r.ec);
    CHECK_FALSE(deadline.timed_out());
  }
  // Idle past the timeout: nothing is armed, so nothing is cancelled; the next read is bounded again.
  asio::steady_timer idle(p.io, 500ms);
  idle.async_wait([](boost::system::error_code) {});
  p.io.run_for(600ms);
  Read r;
  start_read(p, deadline, 40ms, buf, r);
  p.io.restart();
  p.io.run_for(2s);
  REQUIRE(r.ended);
  CHECK(r.ec == asio::error::operation_aborted);
  CHECK(deadline.timed_out());
}

TEST_CASE("a shorter timeout than the pending wait's fires on time", "[read_deadline]") {
  Pair p;
  llmchaos::ReadDeadline deadline(p.reader);
  std::array<char, 16> buf{};
  Read first;
  start_read(p, deadline, 5s, buf, first);  // the timer now sleeps toward 5 s
  asio::write(p.writer, asio::buffer("x", 1));
  while (!first.ended) p.io.run_one_for(1s);
  REQUIRE_FALSE(first.ec);
  Read second;
  start_read(p, deadline, 50ms, buf, second);
  p.io.run_for(2s);
  REQUIRE(second.ended);
  CHECK(second.ec == asio::error::operation_aborted);
  CHECK(second.took < 1s);  // not the first arm's 5 s
}

TEST_CASE("the deadline can go while its timer waits, and the socket is not touched after",
          "[read_deadline]") {
  Pair p;
  auto deadline = std::make_unique<llmchaos::ReadDeadline>(p.reader);
  std::array<char, 16> buf{};
  Read r;
  start_read(p, *deadline, 50ms, buf, r);
  asio::write(p.writer, asio::buffer("x", 1));
  while (!r.ended) p.io.run_one_for(1s);
  deadline.reset();  // its timer still waits toward 50 ms
  p.reader.close();
  p.io.run_for(200ms);  // the cancelled wait ends without touching the closed socket
  CHECK_FALSE(r.ec);
}
