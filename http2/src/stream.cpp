// A stream's coroutine (connection.hpp): the request through the router, the plan carried out on the stream
// as a ClientWire (execute_plan.hpp, the same order as HTTP/1.1), the ledger entry finished.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>

#include "connection.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/mockprovider/execute_plan.hpp"

namespace net = boost::asio;

namespace llmchaos::http2 {
namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

// The stream as the plan's wire: a head is the response HEADERS, chunks and bodies are DATA (taken by
// nghttp2 as the flow-control windows allow; a write returns once they are), a cut is RST_STREAM
// (INTERNAL_ERROR) after the bytes sent, a reset of the connection a GOAWAY and the close.
class StreamWire final : public mock::ClientWire {
 public:
  StreamWire(Connection& conn, Stream& s) : conn_(conn), s_(s) {}
  net::any_io_executor executor() override { return conn_.executor(); }
  net::awaitable<bool> write_head(int status, const mock::HeaderList& headers, bool chunked,
                                  std::size_t content_length, bool) override {
    co_return conn_.submit_response(s_, status, headers,
                                    chunked ? std::nullopt : std::optional<std::size_t>(content_length));
  }
  net::awaitable<bool> write_chunk(std::string_view bytes) override { return send(bytes, false); }
  net::awaitable<bool> write_last_chunk() override { return send({}, true); }
  net::awaitable<bool> write_body(std::string_view bytes) override { return send(bytes, false); }
  net::awaitable<bool> write_whole(int status, const mock::HeaderList& headers, std::string_view body,
                                   bool) override {
    if (!conn_.submit_response(s_, status, headers, body.size())) co_return false;
    co_return co_await send(body, true);
  }
  net::awaitable<mock::WaitEnd> wait(double ms) override;
  void reset() override { conn_.goaway(); }
  void cut() override { conn_.reset_stream(s_, NGHTTP2_INTERNAL_ERROR); }

 private:
  net::awaitable<bool> send(std::string_view bytes, bool last);
  Connection& conn_;
  Stream& s_;
};

// Appends to the stream's DATA and waits until nghttp2 has taken it (and, for the last, END_STREAM).
net::awaitable<bool> StreamWire::send(std::string_view bytes, bool last) {
  if (s_.closed || !s_.responded) co_return false;
  s_.outbox.append(bytes);
  if (last) s_.eof = true;
  conn_.push_data(s_);
  while (!s_.closed && (s_.taken < s_.outbox.size() || (last && !s_.eof_taken))) {
    s_.signal.expires_at(std::chrono::steady_clock::time_point::max());
    co_await s_.signal.async_wait(use_tuple);
  }
  co_return last ? s_.eof_taken : !s_.closed;
}

// A timer raced against the stream's close (the client's RST_STREAM, or the connection gone).
net::awaitable<mock::WaitEnd> StreamWire::wait(double ms) {
  const auto deadline = std::chrono::steady_clock::now() + ms_duration(ms);
  for (;;) {
    if (conn_.host().stopping()) co_return mock::WaitEnd::shutdown;
    if (s_.closed) co_return mock::WaitEnd::client_closed;
    if (std::chrono::steady_clock::now() >= deadline) co_return mock::WaitEnd::elapsed;
    s_.signal.expires_at(deadline);
    co_await s_.signal.async_wait(use_tuple);
  }
}

// Whatever way the coroutine ends (its frame torn down at shutdown included): the ledger entry finished,
// the stream not left open, the connection told.
struct StreamGuard {
  Connection& conn;
  Stream& s;
  std::optional<std::uint64_t> seq;
  mock::Executed done{AttemptOutcome::cut, 0, 0, false};
  StreamGuard(Connection& c, Stream& st) : conn(c), s(st) {}
  StreamGuard(const StreamGuard&) = delete;
  StreamGuard& operator=(const StreamGuard&) = delete;
  ~StreamGuard() {
    if (seq) conn.host().engine().finish(*seq, done.outcome, done.events, done.status);
    conn.end_stream(s);
    conn.stream_done();
  }
};

}  // namespace

net::awaitable<void> serve_stream(std::shared_ptr<Connection> conn, std::shared_ptr<Stream> stream) {
  auto& host = conn->host();
  StreamGuard end(*conn, *stream);
  mock::Routed routed;
  if (stream->refused != 0)
    routed.plan = host.reject(stream->req.target, stream->refused);
  else
    routed = co_await host.route_request(stream->req);
  std::optional<mock::HoldSlot> slot;
  if (routed.plan.action == mock::WireAction::hold) host.take_hold_slot(slot, routed, stream->req.target);
  end.seq = routed.seq;
  StreamWire wire(*conn, *stream);
  end.done = co_await mock::execute_plan(wire, routed.plan, true);
}

}  // namespace llmchaos::http2
