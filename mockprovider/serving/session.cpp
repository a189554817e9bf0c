// One HTTP/1.1 connection (session.hpp).
#include "session.hpp"

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/http.hpp>

#include "http2_host.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/mockprovider/execute_plan.hpp"
#include "llmchaos/net/write_now.hpp"
#include "plain_head.hpp"

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using namespace net::experimental::awaitable_operators;

namespace llmchaos::mock {
namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
constexpr std::size_t max_buffered_while_waiting = 64 * 1024;

ReaderOptions reader_options(const ServerCore& server) {
  const auto& o = server.options;
  const HeadersKept kept = server.router.headers_kept();
  return {{o.header_limit, o.max_header_count, o.body_limit, kept.every},
          kept,
          o.idle_timeout_ms,
          server.serves_http2};
}

}  // namespace

Session::Session(ServerCore& server, tcp::socket socket)
    : server_(server),
      stream_(std::move(socket)),
      reader_(stream_, reader_options(server), stopping_),
      timer_(stream_.get_executor()),
      idle_ms_(server.options.idle_timeout_ms) {
  beast::error_code ec;
  // A plain answer's write is tried at once and falls back to waiting when the socket is not ready
  // (asio's own async operations work the same either way).
  stream_.socket().non_blocking(true, ec);
}

Session::~Session() {
  if (active_seq_)
    server_.engine.finish(*active_seq_, holding_ ? AttemptOutcome::held_then_closed : AttemptOutcome::cut, 0,
                          0);
  server_.remove(this);
}

void Session::cancel() {
  stopping_ = true;
  timer_.cancel();
  close();
}

void Session::close() {
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.socket().close(ec);
}

void Session::reset() {
  beast::error_code ec;
  stream_.socket().set_option(net::socket_base::linger(true, 0), ec);  // close() now sends RST
  stream_.socket().close(ec);
}

void Session::arm() {
  stream_.expires_after(ms_duration(idle_ms_));
}

// The one failure funnel of writes: normal ends are silent, the rest are counted as server events.
void Session::fail(beast::error_code ec, bool write) {
  if (const auto event = connection_event(ec, stopping_, write); !event.empty())
    server_.engine.count_event(event);
}

void Session::end_session() {
  if (!stopping_) {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  }
  close();
}

// Per request: read, route, answer (by the answer source, at once, or the plan carried out), ledger,
// keep or close. The read's steps are inline (request_reader.hpp says why).
net::awaitable<void> Session::run() {
  auto self = shared_from_this();
  RawRequest req;
  req.protocol = WireProtocol::http1;
  for (bool first = true; !stopping_; first = false) {
    ReadResult got = reader_.buffered(req);
    if (reader_.yield_first(got)) {
      co_await net::post(net::deferred);  // the others first, on the session's own executor
      got = reader_.read_now(req);
    }
    while (reader_.waits_for_bytes(got)) {
      auto [ec, n] = co_await reader_.more_bytes();
      got = reader_.took(req, ec, n);
    }
    if (got.kind == ReadResult::Kind::pending) got = co_await reader_.read_rest(req, first);
    if (got.kind != ReadResult::Kind::request) {
      co_await not_a_request(got);
      break;
    }
    server_.answers->before_routing(req, kept_target_);
    const bool blocking = server_.routes_blocking(req);  // no co_await inside ?: (GCC 12: DEVELOPERS.md)
    Routed routed = blocking ? Routed{} : server_.route(req);
    if (blocking) routed = co_await server_.route_blocking(req);
    std::optional<HoldSlot> hold_slot;
    if (routed.plan.action == WireAction::hold) server_.take_hold_slot(hold_slot, routed, req.target);
    active_seq_ = routed.seq;
    Executed done;
    if (server_.answers->answers(routed)) {
      done =
          co_await server_.answers->answer(*this, req, kept_target_, routed, got.keep_alive, server_.engine);
    } else if (answered_at_once(routed.plan) && render_plain_head(head_, routed.plan, got.keep_alive)) {
      // A whole plain answer, without execute()'s coroutine frames (a frame of more than 1 KB is a
      // malloc and a free per call: Asio recycles smaller ones only).
      const std::array<ConstBuffer, 2> bufs{net::buffer(head_), net::buffer(routed.plan.body)};
      std::size_t sent = 0;
      beast::error_code ec;
      if (!send_now(bufs, sent, ec)) ec = co_await send_rest(bufs, sent);
      done = plain_written(routed.plan, got.keep_alive, ec);
    } else {
      done = co_await execute(routed.plan, got.keep_alive);
    }
    active_seq_.reset();
    if (routed.seq) server_.engine.finish(*routed.seq, done.outcome, done.events, done.status);
    if (!done.keep_open) break;
  }
  end_session();
}

// What the reader gave instead of a request: a rejection's answer (then a short drain), the connection
// to HTTP/2, or the end; its event counted.
net::awaitable<void> Session::not_a_request(const ReadResult& got) {
  if (!got.event.empty()) server_.engine.count_event(got.event);
  if (got.kind == ReadResult::Kind::http2) co_await serve_http2(server_, stream_, reader_, stopping_);
  if (got.kind != ReadResult::Kind::rejected) co_return;
  const Plan plan = server_.router.reject(got.target, got.status);
  http::response<http::string_body> res{static_cast<http::status>(plan.status), 11};
  res.body() = plan.body;
  co_await send_by_beast(res, plan.headers, false);
  co_await drain();
}

// After an early answer (413, 431, 400) the client may still be sending: read and drop what comes for a
// moment, so closing with unread bytes does not turn into an RST that destroys the answer in flight.
net::awaitable<void> Session::drain() {
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  auto& buffer = reader_.buffer();
  buffer.consume(buffer.size());
  std::size_t total = 0;
  stream_.expires_after(std::chrono::milliseconds(200));
  while (!ec && total < 64 * 1024 * 1024) {
    auto [e, n] = co_await stream_.async_read_some(buffer.prepare(64 * 1024), use_tuple);
    ec = e;
    total += n;
  }
  buffer.consume(buffer.size());
}

// Every plan that is not a whole plain answer at once: the one order execute_plan.hpp gives both
// protocols, this session as its wire (a cut is the connection's close: the answer is not kept open).
net::awaitable<Executed> Session::execute(const Plan& plan, bool keep_alive) {
  holding_ = plan.action == WireAction::hold;  // the destructor's ledger outcome if the frame is torn down
  Executed out = co_await execute_plan(*this, plan, keep_alive);
  holding_ = false;
  co_return out;
}

Executed Session::plain_written(const Plan& plan, bool keep_alive, beast::error_code ec) {
  Executed out;
  if (ec) {
    fail(ec, true);
    out.outcome = AttemptOutcome::client_closed;
    return out;
  }
  out.status = plan.status;
  out.keep_open = keep_alive;
  return out;
}

// A timer raced against the client: a close (or an error) on the socket ends the wait early. Bytes the
// client sends meanwhile (a pipelined request) stay in the buffer for the next read.
net::awaitable<WaitEnd> Session::wait(double ms) {
  if (stopping_) co_return WaitEnd::shutdown;
  stream_.expires_never();  // the wait is bounded by its own timer
  const auto deadline = std::chrono::steady_clock::now() + ms_duration(ms);
  auto& buffer = reader_.buffer();
  for (;;) {
    timer_.expires_at(deadline);
    if (buffer.size() >= max_buffered_while_waiting) {
      co_await timer_.async_wait(use_tuple);
      co_return stopping_ ? WaitEnd::shutdown : WaitEnd::elapsed;
    }
    auto result = co_await (timer_.async_wait(use_tuple) ||
                            stream_.socket().async_read_some(buffer.prepare(4096), use_tuple));
    if (stopping_) co_return WaitEnd::shutdown;
    if (result.index() == 0) co_return WaitEnd::elapsed;
    auto [ec, n] = std::get<1>(result);
    if (ec) co_return WaitEnd::client_closed;
    buffer.commit(n);
  }
}

}  // namespace llmchaos::mock
