// The Beast server: C++20 coroutines, one session per connection. A session reads a request, asks the
// router for a plan, executes it and reports how it ended; it never decides what to send.
// Reads are bounded by the session's ReadDeadline (the fast path: net/read_deadline.hpp) or Beast's
// expires_after (its fallback). A write goes out at once where the socket takes it (write_now: non-blocking,
// no deadline needed); only what it does not take is written by a composed write bounded by expires_after.
// Every wait is a timer raced against the client closing; stop() cancels every session and returns within a
// second.
#include "llmchaos/mockprovider/server.hpp"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <condition_variable>
#include <iostream>
#include <iterator>
#include <mutex>
#include <optional>
#include <thread>
#include <unordered_map>

#include "llmchaos/core/byte_scan.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/core/sized_text.hpp"
#include "llmchaos/mockprovider/execute_plan.hpp"
#include "llmchaos/mockprovider/fast_head.hpp"
#include "llmchaos/mockprovider/forward_hook.hpp"
#include "llmchaos/mockprovider/http2_hook.hpp"
#include "llmchaos/mockprovider/router.hpp"
#include "llmchaos/net/read_backoff.hpp"
#include "llmchaos/net/read_deadline.hpp"
#include "llmchaos/net/write_now.hpp"

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = net::ip::tcp;
using namespace net::experimental::awaitable_operators;

namespace llmchaos::mock {
namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
// For the per-request awaits: co_await of a deferred operation runs it in the coroutine's own frame,
// where use_awaitable builds a child awaitable frame per operation.
constexpr auto deferred_tuple = net::as_tuple(net::deferred);
constexpr std::size_t max_buffered_while_waiting = 64 * 1024;

// The address to bind: an IP address as written, or a host name (`localhost`) resolved, IPv4 first.
net::ip::address bind_address(net::io_context& ioc, const std::string& bind, std::uint16_t port) {
  beast::error_code ec;
  auto address = net::ip::make_address(bind, ec);
  if (!ec) return address;
  // Only what can be a host name is resolved: "300.1.2.3" or "bad address!" is a mistyped address.
  const bool host_name =
      !bind.empty() && bind.find_first_not_of("0123456789.") != std::string::npos &&
      bind.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") ==
          std::string::npos;
  if (!host_name) throw std::runtime_error(fmt::format("{}:{}: not an IP address", bind, port));
  tcp::resolver resolver(ioc);
  const auto found = resolver.resolve(bind, "", ec);
  if (ec || found.empty())
    throw std::runtime_error(fmt::format("{}:{}: not an IP address, and not a host name that resolves{}",
                                         bind, port, ec ? ": " + ec.message() : std::string()));
  for (const auto& entry : found)
    if (entry.endpoint().address().is_v4()) return entry.endpoint().address();
  return found.begin()->endpoint().address();
}

std::string host_for_url(const std::string& bind) {
  if (bind == "0.0.0.0") return "127.0.0.1";
  if (bind == "::") return "[::1]";
  if (bind.find(':') != std::string::npos) return "[" + bind + "]";
  return bind;
}

class Session;

// Everything the server shares with its sessions.
struct ServerCore {
  explicit ServerCore(ServerOptions o)
      : options(std::move(o)),
        engine(clock, options.time_scale, options.seed),
        router(engine, {options.admin_token, options.forwarder != nullptr}) {
    engine.set_ledger_limit(options.ledger_limit);
    engine.set_answers_forwarded(options.forwarder != nullptr);
    engine.set_require_auth(options.require_auth);  // proxy, cassettes: the answers are not the engine's
  }

  ServerOptions options;
  SteadyClock clock;
  Engine engine;
  Router router;
  std::mutex mutex;
  std::condition_variable idle_cv;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions;
  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> holds{0};  // sessions in a WireAction::hold
  // Where an admin extension's requests run (MockServer::set_admin_extension): a handler may block.
  std::optional<net::thread_pool> blocking;
  bool started = false;
  std::uint16_t port = 0;
  // Declared last: destroyed first, so frames torn down with it still find the engine and the registry.
  // One I/O thread: its own posts skip waking the reactor (an epoll_ctl per completion), and the
  // reactor's per-socket lock is off (UNSAFE_IO: two mutex pairs per request, the start of a read and
  // its completion). Safe because every socket operation then runs on that one thread: sessions,
  // their cancel() and the acceptor's close are posted to it, start() opens the acceptor before the
  // thread runs and stop() touches sockets only after joining it. The scheduler keeps its lock (stop()
  // posts from another thread) and so does the reactor's registration (timers, new sockets).
  net::io_context ioc{options.threads > 1 ? BOOST_ASIO_CONCURRENCY_HINT_DEFAULT
                                          : BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO};
  std::optional<tcp::acceptor> acceptor;
  std::vector<std::thread> threads;

  void add(const std::shared_ptr<Session>& s) {
    std::lock_guard lock(mutex);
    sessions.emplace(s.get(), s);
  }
  void remove(Session* s) {
    std::lock_guard lock(mutex);
    sessions.erase(s);
    if (sessions.empty()) idle_cv.notify_all();
  }
  std::size_t session_count() {
    std::lock_guard lock(mutex);
    return sessions.size();
  }

  net::awaitable<void> accept_loop();
};

// The head of a whole answer rendered straight into `out` (below); false where Beast's rules are needed.
// body_size nullopt: a chunked answer.
bool render_plain_head(std::string& out, int status_code, const HeaderList& headers,
                       std::optional<std::size_t> body_size, bool keep_alive);

// One connection. Lives on its own strand; cancel() is posted to that strand.
// It is also the client side a forwarder (`llmchaos proxy`) writes to, and the host of an HTTP/2
// connection (http2_hook.hpp) when its first bytes are the client preface.
class Session : public std::enable_shared_from_this<Session>, public ClientWire, public Http2Host {
 public:
  Session(ServerCore& server, tcp::socket socket);
  ~Session() override;
  net::awaitable<void> run();
  void cancel();  // on the session's strand
  net::any_io_executor executor() override { return timer_.get_executor(); }
  net::awaitable<WaitEnd> wait(double ms) override;
  net::awaitable<bool> write_head(int status, const HeaderList& headers, bool chunked,
                                  std::size_t content_length, bool keep_alive) override;
  net::awaitable<bool> write_chunk(std::string_view bytes) override;
  net::awaitable<bool> write_head_and_chunk(int status, const HeaderList& headers, bool keep_alive,
                                            std::string_view first_chunk) override;
  net::awaitable<bool> write_last_chunk() override;
  net::awaitable<bool> write_body(std::string_view bytes) override;
  net::awaitable<bool> write_whole(int status, const HeaderList& headers, std::string_view body,
                                   bool keep_alive) override;
  void reset() override;
  // Http2Host
  tcp::socket& socket() override { return stream_.socket(); }
  std::string_view received() const override {
    const auto data = buffer_.data();
    return {static_cast<const char*>(data.data()), data.size()};
  }
  const ServerOptions& options() const override { return server_.options; }
  Engine& engine() override { return server_.engine; }
  bool stopping() const override { return stopping_; }
  net::awaitable<Routed> route_request(RawRequest& req) override;
  Plan reject(std::string_view target, int status) const override {
    return server_.router.reject(target, status);
  }
  void take_hold_slot(std::optional<HoldSlot>& slot, Routed& routed, std::string_view target) override;

 private:
  net::awaitable<Executed> execute(const Plan& plan, bool keep_alive);
  net::awaitable<bool> read_preface();
  net::awaitable<bool> read_not_fast(RawRequest& req, bool& keep_alive, bool first);
  // A whole plain answer whose head render_plain_head wrote into head_: one gathered write tried at once
  // (the socket is non-blocking; on loopback the whole answer nearly always goes out in this call), the
  // bytes it took (0 when it would block, or on an error in ec).
  std::array<net::const_buffer, 2> plain_buffers(const Plan& plan) const {
    return {net::buffer(head_), net::buffer(plan.body)};
  }
  template <std::size_t N>
  std::size_t write_now(const std::array<net::const_buffer, N>& bufs, beast::error_code& ec);
  template <std::size_t N>
  net::awaitable<beast::error_code> write_rest(std::array<net::const_buffer, N> bufs, std::size_t sent);
  template <std::size_t N>
  net::awaitable<bool> send(const std::array<net::const_buffer, N>& bufs);
  Executed plain_written(const Plan& plan, bool keep_alive, beast::error_code ec);
  net::awaitable<void> send_reject(std::string_view target, int status);
  net::awaitable<void> drain();
  template <class Message>
  void apply_headers(Message& m, const HeaderList& headers, bool keep_alive);
  template <class Message>
  void apply_headers(Message& m, const Plan& plan, bool keep_alive) {
    apply_headers(m, plan.headers, keep_alive);
  }
  net::awaitable<bool> write_all(net::const_buffer bytes);
  void fail(beast::error_code ec, std::string_view what);
  void close();
  void arm() { stream_.expires_after(ms_duration(idle_ms_)); }
  FastHead parse_fast(RawRequest& req, bool& keep_alive);
  net::awaitable<bool> read_with_beast(RawRequest& req, bool& keep_alive);
  FastHead read_now(RawRequest& req, bool& keep_alive, beast::error_code& ec);
  bool keep_target_for_forwarding(RawRequest& req);
  void end_session();
  void take_headers(const http::request<http::string_body>& msg, RawRequest& req) const;
  Routed route(RawRequest& req);
  net::awaitable<Routed> route_blocking(RawRequest& req);

  ServerCore& server_;
  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::string head_;  // the response head of a plain answer, reused across the connection's requests
  std::string forward_target_;  // a proxied request's target as sent (keep_target_for_forwarding)
  net::steady_timer timer_;
  // The fast path's read deadline: one timer per connection that each read only moves, instead of a
  // timer operation per read.
  ReadDeadline read_deadline_;
  // Whether the read after the yield is tried (a client one at a time never has its next request there
  // by then: each miss is a recv and a pass through the scheduler; net/read_backoff.hpp).
  ReadBackoff read_now_backoff_;
  double idle_ms_;
  bool stopping_ = false;
  std::optional<std::uint64_t> active_seq_;  // finished by the destructor if the frame is torn down
  bool holding_ = false;
};

Session::Session(ServerCore& server, tcp::socket socket)
    : server_(server),
      stream_(std::move(socket)),
      timer_(stream_.get_executor()),
      read_deadline_(stream_.socket()),
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

// The one failure funnel: normal ends are silent, the rest are counted as server events.
void Session::fail(beast::error_code ec, std::string_view what) {
  if (ec == net::error::operation_aborted || ec == http::error::end_of_stream || ec == net::error::eof ||
      ec == net::error::connection_reset || ec == net::error::broken_pipe || stopping_)
    return;
  if (ec == beast::error::timeout) {
    server_.engine.count_event("idle_timeout");
    return;
  }
  server_.engine.count_event(fmt::format("{}_error", what));
}

// A timer raced against the client: a close (or an error) on the socket ends the wait early. Bytes the
// client sends meanwhile (a pipelined request) stay in the buffer for the next read.
net::awaitable<WaitEnd> Session::wait(double ms) {
  if (stopping_) co_return WaitEnd::shutdown;
  stream_.expires_never();  // the wait is bounded by its own timer
  const auto deadline = std::chrono::steady_clock::now() + ms_duration(ms);
  for (;;) {
    timer_.expires_at(deadline);
    if (buffer_.size() >= max_buffered_while_waiting) {
      co_await timer_.async_wait(use_tuple);
      co_return stopping_ ? WaitEnd::shutdown : WaitEnd::elapsed;
    }
    auto result = co_await (timer_.async_wait(use_tuple) ||
                            stream_.socket().async_read_some(buffer_.prepare(4096), use_tuple));
    if (stopping_) co_return WaitEnd::shutdown;
    if (result.index() == 0) co_return WaitEnd::elapsed;
    auto [ec, n] = std::get<1>(result);
    if (ec) co_return WaitEnd::client_closed;
    buffer_.commit(n);
  }
}

template <class Message>
void Session::apply_headers(Message& m, const HeaderList& headers, bool keep_alive) {
  // Beast knows no reason phrase for some statuses providers use (529): never send "<unknown-status>".
  if (http::obsolete_reason(m.result()) == "<unknown-status>")
    m.reason(m.result_int() == 529 ? "Overloaded" : "Error");
  m.set(http::field::server, "llmchaos");
  for (const auto& [k, v] : headers) m.set(k, v);
  m.keep_alive(keep_alive);
}

// A head, a chunk or a body goes out at once where the socket takes it (Beast's serializer and composed
// writes cost more than the rest of a proxied answer: bench/README.md, proxy); Beast's serializer
// writes a head only where its rules are needed (render_plain_head says which).
net::awaitable<bool> Session::write_head(int status, const HeaderList& headers, bool chunked,
                                         std::size_t content_length, bool keep_alive) {
  const auto length = chunked ? std::nullopt : std::optional<std::size_t>(content_length);
  if (render_plain_head(head_, status, headers, length, keep_alive))
    co_return co_await send(std::array<net::const_buffer, 1>{net::buffer(head_)});
  http::response<http::empty_body> res{static_cast<http::status>(status), 11};
  apply_headers(res, headers, keep_alive);
  if (chunked)
    res.chunked(true);
  else
    res.content_length(content_length);
  http::response_serializer<http::empty_body> sr{res};
  arm();
  auto [ec, n] = co_await http::async_write_header(stream_, sr, use_tuple);
  if (ec) fail(ec, "write");
  co_return !ec;
}

net::awaitable<bool> Session::write_all(net::const_buffer bytes) {
  co_return co_await send(std::array<net::const_buffer, 1>{bytes});
}

// A chunk's size line ("1a\r\n"): hex digits of a size_t and CRLF.
using ChunkSizeLine = std::array<char, 2 * sizeof(std::size_t) + 2>;

// The size line of a chunk of `size` bytes in `line`; returns its length.
std::size_t chunk_size_line(std::size_t size, ChunkSizeLine& line) {
  return static_cast<std::size_t>(fmt::format_to(line.data(), "{:x}\r\n", size) - line.data());
}

net::awaitable<bool> Session::write_chunk(std::string_view bytes) {
  if (bytes.empty()) co_return true;  // an empty chunk would be the last one
  ChunkSizeLine size_line;
  const std::size_t line_len = chunk_size_line(bytes.size(), size_line);
  co_return co_await send(std::array<net::const_buffer, 3>{net::buffer(size_line.data(), line_len),
                                                           net::buffer(bytes), net::buffer("\r\n", 2)});
}

net::awaitable<bool> Session::write_head_and_chunk(int status, const HeaderList& headers, bool keep_alive,
                                                   std::string_view first_chunk) {
  if (first_chunk.empty() || !render_plain_head(head_, status, headers, std::nullopt, keep_alive))
    co_return co_await write_head_then_chunk(*this, status, headers, keep_alive, first_chunk);
  ChunkSizeLine size_line;
  const std::size_t line_len = chunk_size_line(first_chunk.size(), size_line);
  co_return co_await send(std::array<net::const_buffer, 4>{net::buffer(head_),
                                                           net::buffer(size_line.data(), line_len),
                                                           net::buffer(first_chunk), net::buffer("\r\n", 2)});
}

net::awaitable<bool> Session::write_last_chunk() {
  co_return co_await send(std::array<net::const_buffer, 1>{net::buffer("0\r\n\r\n", 5)});
}

net::awaitable<bool> Session::write_body(std::string_view bytes) {
  co_return co_await write_all(net::buffer(bytes));
}

net::awaitable<bool> Session::write_whole(int status, const HeaderList& headers, std::string_view body,
                                          bool keep_alive) {
  if (render_plain_head(head_, status, headers, body.size(), keep_alive))
    co_return co_await send(std::array<net::const_buffer, 2>{net::buffer(head_), net::buffer(body)});
  http::response<http::string_body> res{static_cast<http::status>(status), 11};
  apply_headers(res, headers, keep_alive);
  res.body() = std::string(body);
  res.prepare_payload();
  arm();
  auto [ec, n] = co_await http::async_write(stream_, res, use_tuple);  // head and body in one gathered write
  if (ec) fail(ec, "write");
  co_return !ec;
}

// A header Beast sets from the message itself: a plan that names one goes through Beast's serializer.
// Told by length first (a switch, no string built per call): most names match none of the three lengths.
bool managed_by_beast(std::string_view name) {
  using namespace std::string_view_literals;
  switch (name.size()) {
    case 10:
      return byte_scan::iequals_lower(name, "connection"sv);
    case 14:
      return byte_scan::iequals_lower(name, "content-length"sv);
    case 17:
      return byte_scan::iequals_lower(name, "transfer-encoding"sv);
    default:
      return false;
  }
}

// The head Beast would write for a whole plain answer (status line, Server, the plan's headers in order,
// Connection: close when not kept alive, Content-Length), rendered straight into `out`: Beast's
// serializer costs more than the rest of a plain answer. False when the plan's headers need Beast's
// own rules (a repeated name, or one Beast manages), or the status is one that has no body.
bool render_plain_head(std::string& out, int status_code, const HeaderList& headers,
                       std::optional<std::size_t> body_size, bool keep_alive) {
  const auto status = static_cast<http::status>(status_code);
  if (status_code < 200 || status_code > 999 || status == http::status::no_content ||
      status == http::status::not_modified)
    return false;
  using namespace std::string_view_literals;  // literals as views: no strlen per piece
  bool own_server = true;  // a Server of the answer's (a proxied one) replaces ours, in its place
  for (std::size_t i = 0; i < headers.size(); ++i) {
    const std::string_view name = headers[i].first;
    if (managed_by_beast(name)) return false;
    if (byte_scan::iequals_lower(name, "server"sv)) own_server = false;
    for (std::size_t j = 0; j < i; ++j)
      if (byte_scan::iequals(name, headers[j].first)) return false;
  }
  const auto obsolete = http::obsolete_reason(status);
  const std::string_view reason = obsolete == "<unknown-status>"
                                      ? (status_code == 529 ? "Overloaded"sv : "Error"sv)
                                      : std::string_view(obsolete.data(), obsolete.size());
  const fmt::format_int status_digits(status_code), length_digits(body_size.value_or(0));
  // Sized first, then written in one pass (sized_text.hpp): appending piece by piece (a capacity check
  // and a call per piece) cost 680 of the head's 1,250 instructions per request.
  render_sized_into(out, [&](auto& put) {
    put("HTTP/1.1 "sv);
    put(status_digits);
    put(" "sv);
    put(reason);
    put("\r\n"sv);
    if (own_server) put("Server: llmchaos\r\n"sv);
    for (const auto& [k, v] : headers) {
      put(std::string_view(k));
      put(": "sv);
      put(std::string_view(v));
      put("\r\n"sv);
    }
    if (!keep_alive) put("Connection: close\r\n"sv);
    if (body_size) {
      put("Content-Length: "sv);
      put(length_digits);
      put("\r\n\r\n"sv);
    } else {
      put("Transfer-Encoding: chunked\r\n\r\n"sv);
    }
  });
  return true;
}

bool render_plain_head(std::string& out, const Plan& plan, bool keep_alive) {
  return render_plain_head(out, plan.status, plan.headers, plan.body.size(), keep_alive);
}

using byte_scan::ascii_lower;

FastHead Session::parse_fast(RawRequest& req, bool& keep_alive) {
  const auto data = buffer_.data();
  const auto& opt = server_.options;
  // A proxy passes every header on: the fast path keeps them all.
  const auto read =
      read_fast_head(std::string_view(static_cast<const char*>(data.data()), data.size()),
                     {opt.header_limit, opt.max_header_count, opt.body_limit, opt.forwarder != nullptr}, req);
  if (read.verdict == FastHead::ready) {
    keep_alive = read.keep_alive;
    buffer_.consume(read.consumed);
  }
  return read.verdict;
}

// An admin extension's request, routed on the blocking pool: its handler may wait (for a ledger to
// settle) while the I/O threads go on serving the attempts it waits for.
net::awaitable<Routed> Session::route_blocking(RawRequest& req) {
  co_return co_await net::co_spawn(
      server_.blocking->get_executor(), [this, &req]() -> net::awaitable<Routed> { co_return route(req); },
      net::use_awaitable);
}

// The router's plan for a request, built in place (no move of the plan into a waiting one); the engine
// reads the request where it lies (Router::handle).
Routed Session::route(RawRequest& req) {
  try {
    return server_.router.handle(req);
  } catch (const std::exception&) {  // a bug must cost one answer, never the server
    server_.engine.count_event("internal_error");
    return {json_plan(500, R"({"error":"internal error in the mock provider"})"), {}};
  }
}

template <std::size_t N>
std::size_t Session::write_now(const std::array<net::const_buffer, N>& bufs, beast::error_code& ec) {
  return llmchaos::write_now(stream_.socket(), bufs, ec);
}

// What the socket did not take at once goes out asynchronously.
template <std::size_t N>
net::awaitable<beast::error_code> Session::write_rest(std::array<net::const_buffer, N> bufs,
                                                      std::size_t sent) {
  beast::buffers_suffix<std::array<net::const_buffer, N>> rest(bufs);
  rest.consume(sent);
  arm();
  auto [ec, n] = co_await net::async_write(stream_, rest, use_tuple);
  co_return ec;
}

template <std::size_t N>
net::awaitable<bool> Session::send(const std::array<net::const_buffer, N>& bufs) {
  beast::error_code ec;
  const std::size_t sent = write_now(bufs, ec);
  if (!ec && sent < net::buffer_size(bufs)) ec = co_await write_rest(bufs, sent);
  if (ec) fail(ec, "write");
  co_return !ec;
}

Executed Session::plain_written(const Plan& plan, bool keep_alive, beast::error_code ec) {
  Executed out;
  if (ec) {
    fail(ec, "write");
    out.outcome = AttemptOutcome::client_closed;
    return out;
  }
  out.status = plan.status;
  out.keep_open = keep_alive;
  return out;
}

// A plan run() answers itself, without execute()'s coroutine frames (a frame of more than 1 KB is a
// malloc and a free per call: Asio recycles smaller ones only): a whole plain answer, at once.
bool answered_at_once(const Plan& plan) {
  return plan.action == WireAction::respond && !plan.streamed && plan.end == StreamEnd::complete &&
         !(plan.latency_ms > 0);
}

// Every plan that is not a whole plain answer at once: the one order execute_plan.hpp gives both
// protocols, this session as its wire (a cut is the connection's close: the answer is not kept open).
net::awaitable<Executed> Session::execute(const Plan& plan, bool keep_alive) {
  holding_ = plan.action == WireAction::hold;  // the destructor's ledger outcome if the frame is torn down
  Executed out = co_await execute_plan(*this, plan, keep_alive);
  holding_ = false;
  co_return out;
}

// A connection's first request went to Beast: is it the HTTP/2 client preface (http2_hook.hpp)? Read
// until the preface is whole, or the bytes are something else (then Beast reads them as it would).
net::awaitable<bool> Session::read_preface() {
  for (;;) {
    const auto match = match_http2_preface(received());
    if (match != PrefaceMatch::partial) co_return match == PrefaceMatch::whole;
    arm();
    auto [ec, n] = co_await stream_.async_read_some(buffer_.prepare(4096), use_tuple);
    if (ec) co_return false;  // Beast's read then ends the connection as it would have
    buffer_.commit(n);
  }
}

// What the fast head reader left to Beast: on a connection's first request, the HTTP/2 preface first
// (http2_hook.hpp: then the connection is HTTP/2's until it ends, and false), else read_with_beast.
net::awaitable<bool> Session::read_not_fast(RawRequest& req, bool& keep_alive, bool first) {
  const auto& opt = server_.options;
  if (first && opt.http2 && !opt.forwarder) {
    const bool h2 = co_await read_preface();
    if (h2) {
      stream_.expires_never();  // HTTP/2 bounds its own reads and writes
      co_await opt.http2->serve(*this);
      co_return false;
    }
  }
  co_return co_await read_with_beast(req, keep_alive);
}

// An HTTP/2 stream's request (Http2Host): routed as run() routes an HTTP/1.1 one.
net::awaitable<Routed> Session::route_request(RawRequest& req) {
  if (server_.blocking && server_.router.extended(req.target)) co_return co_await route_blocking(req);
  co_return route(req);
}

net::awaitable<void> Session::send_reject(std::string_view target, int status) {
  const Plan plan = server_.router.reject(target, status);
  http::response<http::string_body> res{static_cast<http::status>(plan.status), 11};
  apply_headers(res, plan, false);
  res.body() = plan.body;
  res.prepare_payload();
  arm();
  auto [ec, n] = co_await http::async_write(stream_, res, use_tuple);
  if (ec) fail(ec, "write");
  co_await drain();
}

// After an early answer (413, 431, 400) the client may still be sending: read and drop what comes for a
// moment, so closing with unread bytes does not turn into an RST that destroys the answer in flight.
net::awaitable<void> Session::drain() {
  beast::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  buffer_.consume(buffer_.size());
  std::size_t total = 0;
  stream_.expires_after(std::chrono::milliseconds(200));
  while (!ec && total < 64 * 1024 * 1024) {
    auto [e, n] = co_await stream_.async_read_some(buffer_.prepare(64 * 1024), use_tuple);
    ec = e;
    total += n;
  }
  buffer_.consume(buffer_.size());
}

// GCC 12 reports the release of this coroutine's frame by Asio's frame allocator (aligned_new /
// aligned_delete, a matched pair), inlined into accept_loop, as a mismatched free: a false
// -Wmismatched-new-delete (it appeared when the proxy's forwarding branch grew the frame), silenced for
// this one function.
// With nothing buffered after a yield: one plain non-blocking recv and, if it brought bytes, the fast
// parse. `ec` stays set only when the connection failed with nothing buffered.
FastHead Session::read_now(RawRequest& req, bool& keep_alive, beast::error_code& ec) {
  const std::size_t n = stream_.socket().read_some(buffer_.prepare(8192), ec);
  if (!ec) {
    buffer_.commit(n);
    return parse_fast(req, keep_alive);
  }
  if (ec == net::error::would_block || ec == net::error::try_again) {
    ec = {};  // not there yet: wait for it
    return FastHead::need_more;
  }
  if (buffer_.size() > 0) {
    ec = {};
    return FastHead::beast;  // a partial request, then the end: Beast says what it was
  }
  return FastHead::need_more;
}

// A proxy keeps the target as it came, to forward it; the router (and so the ledger) never sees a key. The
// rest of the request is forwarded from the session's own buffers (ForwardRequest's views).
bool Session::keep_target_for_forwarding(RawRequest& req) {
  const auto& forwarder = server_.options.forwarder;
  if (!forwarder) return false;
  assign_reusing(forward_target_, req.target);
  forwarder->mask_ledger_target(req.target);
  return true;
}

// A held connection takes a slot; with none left it is answered instead, and the ledger entry says so
// (status 503/529).
void Session::take_hold_slot(std::optional<HoldSlot>& slot, Routed& routed, std::string_view target) {
  slot.emplace(server_.holds, server_.options.max_held_connections);
  if (slot->taken()) return;
  server_.engine.count_event("hold_limit");
  routed.plan = server_.router.reject(target, 503);
}

void Session::end_session() {
  if (!stopping_) {
    beast::error_code ec;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ec);
  }
  close();
}

// The Beast way, for whatever the fast head reader left alone (the bytes already buffered included): a
// proxy's request (every header kept), a body, Expect: 100-continue, anything over a limit (answered
// 413/414/431/400 here). True with `req` filled in; false when the connection ends.
net::awaitable<bool> Session::read_with_beast(RawRequest& req, bool& keep_alive) {
  const auto& opt = server_.options;
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(opt.header_limit));
  parser.body_limit(opt.body_limit);
  arm();
  beast::error_code ec;
  std::size_t n = 0;
  std::tie(ec, n) = co_await http::async_read_header(stream_, buffer_, parser, use_tuple);
  if (!ec && static_cast<std::size_t>(std::distance(parser.get().begin(), parser.get().end())) >
                 opt.max_header_count) {
    server_.engine.count_event("too_many_headers");
    co_await send_reject({}, 431);
    co_return false;
  }
  if (!ec && !parser.is_done() && beast::iequals(parser.get()[http::field::expect], "100-continue")) {
    http::response<http::empty_body> go_on{http::status::continue_, 11};
    arm();
    std::tie(ec, n) = co_await http::async_write(stream_, go_on, use_tuple);
  }
  if (!ec && !parser.is_done()) {
    arm();
    std::tie(ec, n) = co_await http::async_read(stream_, buffer_, parser, use_tuple);
  }
  if (ec) {
    if (stopping_) co_return false;
    if (ec == http::error::body_limit) {
      server_.engine.count_event("body_too_large");
      co_await send_reject(parser.get().target(), 413);
    } else if (ec == http::error::header_limit && parser.get().target().empty()) {
      // Beast stores the target once the request line is whole: none yet means the request line, i.e.
      // the URL, alone is over the limit: 414, not 431.
      server_.engine.count_event("uri_too_long");
      co_await send_reject({}, 414);
    } else if (ec == http::error::header_limit) {
      server_.engine.count_event("header_too_large");
      co_await send_reject({}, 431);
    } else if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
               ec != http::error::end_of_stream && ec != http::error::partial_message) {
      server_.engine.count_event("bad_http");
      co_await send_reject({}, 400);
    } else {
      fail(ec, "read");
    }
    co_return false;
  }
  auto& msg = parser.get();
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  take_headers(msg, req);
  req.body = std::move(msg.body());
  keep_alive = msg.keep_alive();
  co_return true;
}

// The request's headers into `req`: every one for a proxy (it passes them on), else only those the
// router reads, lower-cased (the rest would cost for nothing).
void Session::take_headers(const http::request<http::string_body>& msg, RawRequest& req) const {
  req.headers.clear();
  for (const auto& f : msg) {
    const auto raw = f.name_string();
    if (server_.options.forwarder) {
      auto& [name, value] = req.headers.emplace_back(std::string(raw), std::string(f.value()));
      for (auto& c : name) c = ascii_lower(c);
      continue;
    }
    std::array<char, 32> lower;
    if (raw.size() > lower.size()) continue;  // longer than any header the router reads
    for (std::size_t i = 0; i < raw.size(); ++i) lower[i] = ascii_lower(raw[i]);
    const std::string_view name(lower.data(), raw.size());
    if (Router::reads_header(name) || (name == "host" && Router::reads_host(msg.target())))
      req.headers.emplace_back(std::string(name), std::string(f.value()));
  }
}

// Per request: read, route, answer (forwarded, written at once, or executed), ledger, keep or close.
// The read: the fast way (parse_fast) while the request fits, waiting for bytes under the read
// deadline; `got` ends ready (req filled in), beast (Beast's parser takes over the buffered bytes), or
// need_more with `ec` set when the read failed or timed out (the connection ends). Inline, not a
// coroutine of its own: that would cost a frame per request.
// Syscalls per request are what a plain answer costs most (each is about 1 us on this kind of VM), then
// passes through Asio's scheduler:
// - with nothing buffered, the session first yields once to the other ready handlers (a post: no
//   syscall, the answer is already written), as nginx reads only once epoll says so: under load the
//   client's next request has usually arrived by then;
// - then it reads with a plain non-blocking recv (async_read_some's immediate success would be one more
//   pass through the scheduler), and only when that comes back empty waits on the reactor's
//   edge-triggered registration (a read_some + async_wait cost an epoll_ctl per wait: async_wait re-arms
//   the descriptor);
// - a client one at a time misses that read so often that it is skipped (read_now_backoff_), and the
//   wait that follows is Asio's own async_read_some (a recv first, then the reactor's wait).
// (the syscall counts per request this gave: bench/README.md, mock_throughput).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
net::awaitable<void> Session::run() {
  auto self = shared_from_this();
  const auto& opt = server_.options;
  RawRequest req;
  req.protocol = WireProtocol::http1;
  bool first = true;  // the connection's first request: it may be the HTTP/2 preface (http2_hook.hpp)
  while (!stopping_) {
    bool keep_alive = false;
    FastHead got = FastHead::beast;
    beast::error_code ec;
    // Read: the fast way while the request fits, under read_deadline_ (see above).
    if (idle_ms_ > 0) got = parse_fast(req, keep_alive);  // a pipelined request may be there already
    if (idle_ms_ > 0 && got == FastHead::need_more && read_now_backoff_.try_now()) {
      co_await net::post(net::deferred);  // the others first (see above), on the session's own executor
      if (!stopping_) got = read_now(req, keep_alive, ec);
      if (got == FastHead::need_more && !ec)
        read_now_backoff_.missed();
      else
        read_now_backoff_.found();
    }
    if (idle_ms_ > 0 && got == FastHead::need_more && !ec) {
      read_deadline_.arm(ms_duration(idle_ms_));
      for (;;) {
        std::size_t n = 0;
        std::tie(ec, n) = co_await stream_.socket().async_read_some(buffer_.prepare(8192), deferred_tuple);
        if (!ec) {
          buffer_.commit(n);
          got = parse_fast(req, keep_alive);
          if (got != FastHead::need_more || stopping_) break;
          continue;
        }
        if (read_deadline_.timed_out())
          ec = beast::error::timeout;
        else if (!stopping_ && buffer_.size() > 0)
          got = FastHead::beast;  // a partial request: Beast says what it was
        break;
      }
      read_deadline_.disarm();
      if (got == FastHead::beast) ec = {};
    }
    if (ec) {
      if (!stopping_) fail(ec, "read");
      break;
    }
    if (got == FastHead::need_more) break;  // stopping
    if (got == FastHead::beast) {  // not in a && (GCC 12's coroutine conditionals, see execute_plan.cpp)
      const bool read = co_await read_not_fast(req, keep_alive, first);
      if (!read) break;
    }

    const bool forwarding = keep_target_for_forwarding(req);
    // Not `c ? co_await a : b` (GCC 12's coroutine conditionals, see execute_plan.cpp); a provider request's
    // plan is still built in place.
    const bool extended = server_.blocking && server_.router.extended(req.target);
    Routed routed = extended ? Routed{} : route(req);
    if (extended) routed = co_await route_blocking(req);
    std::optional<HoldSlot> hold_slot;
    if (routed.plan.action == WireAction::hold) take_hold_slot(hold_slot, routed, req.target);
    active_seq_ = routed.seq;
    Executed done;
    if (forwarding && routed.seq && opt.forwarder->forwards_plan(routed.plan)) {
      const ForwardRequest forward{req.method, forward_target_, req.headers, req.body,
                                   routed.ns,  routed.route,    routed.path};
      done = co_await opt.forwarder->forward(*this, forward, routed.plan, keep_alive, server_.engine,
                                             *routed.seq);
    } else if (answered_at_once(routed.plan) && render_plain_head(head_, routed.plan, keep_alive)) {
      beast::error_code wec;
      const auto bufs = plain_buffers(routed.plan);
      const std::size_t sent = write_now(bufs, wec);
      if (!wec && sent < head_.size() + routed.plan.body.size()) wec = co_await write_rest(bufs, sent);
      done = plain_written(routed.plan, keep_alive, wec);
    } else {
      done = co_await execute(routed.plan, keep_alive);
    }
    active_seq_.reset();
    if (routed.seq) server_.engine.finish(*routed.seq, done.outcome, done.events, done.status);
    if (!done.keep_open) break;
    first = false;
  }
  end_session();
}
#pragma GCC diagnostic pop

// Over the connection limit: a canned 503, then a short drain so the close does not become an RST that
// destroys the answer. Not a session (nothing to ledger); it ends by itself within its deadline.
net::awaitable<void> reject_connection(tcp::socket socket) {
  static constexpr std::string_view busy =
      "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: "
      "33\r\nconnection: "
      "close\r\n\r\n{\"error\":\"too many connections\"}\n";
  beast::tcp_stream stream(std::move(socket));
  stream.expires_after(std::chrono::milliseconds(500));
  auto [ec, n] = co_await net::async_write(stream, net::buffer(busy), use_tuple);
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  std::array<char, 4096> sink;
  for (int i = 0; !ec && i < 1024; ++i)
    std::tie(ec, n) = co_await stream.async_read_some(net::buffer(sink), use_tuple);
  stream.socket().close(ec);
}

net::awaitable<void> ServerCore::accept_loop() {
  for (;;) {
    // With one thread the io_context already serialises a session's handlers: a strand would only cost.
    auto executor = options.threads > 1 ? net::any_io_executor(net::make_strand(ioc))
                                        : net::any_io_executor(ioc.get_executor());
    auto [ec, socket] = co_await acceptor->async_accept(executor, use_tuple);
    if (stopping) co_return;
    if (ec) {
      if (ec == net::error::operation_aborted || ec == net::error::bad_descriptor) co_return;
      engine.count_event("accept_error");  // e.g. out of file descriptors: back off briefly
      net::steady_timer pause(acceptor->get_executor(), std::chrono::milliseconds(10));
      co_await pause.async_wait(use_tuple);
      continue;
    }
    if (session_count() >= options.max_connections) {
      engine.count_event("connection_limit");
      auto executor = socket.get_executor();
      net::co_spawn(executor, reject_connection(std::move(socket)), net::detached);
      continue;
    }
    beast::error_code ignore;
    socket.set_option(tcp::no_delay(true), ignore);  // one SSE event per segment, sent at once
    auto session = std::make_shared<Session>(*this, std::move(socket));
    add(session);
    net::co_spawn(session->executor(), session->run(), net::detached);
  }
}

}  // namespace

struct MockServer::Impl : ServerCore {
  using ServerCore::ServerCore;
};

MockServer::MockServer(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

MockServer::~MockServer() {
  stop();
}

void MockServer::start() {
  auto& im = *impl_;
  if (im.started) return;
  const auto& o = im.options;
  const auto address = bind_address(im.ioc, o.bind, o.port);
  if (!address.is_loopback() && o.admin_token.empty() && !o.insecure_admin)
    throw std::runtime_error(fmt::format(
        "refusing to bind {}: it is not a loopback address, so the admin API needs a token "
        "(--admin-token-file FILE or LLMCHAOS_ADMIN_TOKEN; --insecure-admin leaves it open to anyone)",
        o.bind));
  beast::error_code ec;
  const tcp::endpoint endpoint{address, o.port};
  tcp::acceptor acceptor(net::make_strand(im.ioc));
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error(fmt::format("{}:{}: cannot listen: {}", o.bind, o.port, ec.message()));
  im.port = acceptor.local_endpoint().port();
  im.acceptor.emplace(std::move(acceptor));
  net::co_spawn(im.acceptor->get_executor(), im.accept_loop(), net::detached);
  im.started = true;
  const int n = std::max(1, o.threads);
  for (int i = 0; i < n; ++i) im.threads.emplace_back([&im] { im.ioc.run(); });
}

void MockServer::stop() {
  auto& im = *impl_;
  if (!im.started || im.stopping.exchange(true)) return;
  net::post(im.acceptor->get_executor(), [&im] {
    beast::error_code ec;
    im.acceptor->close(ec);
  });
  std::vector<std::shared_ptr<Session>> live;
  {
    std::lock_guard lock(im.mutex);
    for (auto& [p, weak] : im.sessions)
      if (auto s = weak.lock()) live.push_back(std::move(s));
  }
  for (auto& s : live) net::post(s->executor(), [s] { s->cancel(); });
  live.clear();
  {
    // Sessions end as their cancelled operations complete; whatever is left after the grace period is
    // torn down with the io_context (their ledger entries are finished by the session destructor).
    std::unique_lock lock(im.mutex);
    im.idle_cv.wait_for(lock, std::chrono::milliseconds(500), [&] { return im.sessions.empty(); });
  }
  if (im.blocking) im.blocking->join();  // an extension's handler ends on its own (bounded waits)
  im.ioc.stop();
  for (auto& t : im.threads) t.join();
  im.threads.clear();
  if (im.options.forwarder) im.options.forwarder->close_idle();  // its sockets belong to this io_context
}

std::uint16_t MockServer::port() const {
  return impl_->port;
}

std::string MockServer::base_url() const {
  const auto& o = impl_->options;
  if (!o.public_url.empty()) return o.public_url;
  // A server on every address is reached, from its own host, on loopback.
  const std::string host = o.bind == "0.0.0.0" ? "127.0.0.1" : o.bind == "::" ? "::1" : o.bind;
  return fmt::format("http://{}:{}", host_for_url(host), impl_->port);
}

Engine& MockServer::engine() {
  return impl_->engine;
}

void MockServer::set_admin_extension(std::shared_ptr<AdminExtension> extension) {
  auto& im = *impl_;
  if (im.started) throw std::logic_error("MockServer::set_admin_extension after start()");
  if (extension && !im.blocking) im.blocking.emplace(2);
  im.router.set_extension(std::move(extension));
}

}  // namespace llmchaos::mock
