// One HTTP/2 connection over nghttp2 (connection.hpp).
#include "connection.hpp"

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/experimental/awaitable_operators.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <chrono>
#include <cstring>

#include "llmchaos/core/byte_scan.hpp"
#include "llmchaos/core/clock.hpp"

namespace net = boost::asio;
using namespace net::experimental::awaitable_operators;

namespace llmchaos::http2 {
namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);
constexpr std::size_t write_batch = 64 * 1024;  // bytes gathered from nghttp2 per socket write
constexpr std::uint32_t max_concurrent_streams = 100;

// HTTP/1.1's connection-specific headers, which HTTP/2 forbids (RFC 9113 8.2.2), and the length the
// block states itself.
bool left_out(std::string_view lower) {
  return lower == "connection" || lower == "keep-alive" || lower == "proxy-connection" ||
         lower == "transfer-encoding" || lower == "upgrade" || lower == "content-length" || lower == "server";
}

}  // namespace

std::vector<std::pair<std::string, std::string>> response_header_block(int status,
                                                                       const mock::HeaderList& headers,
                                                                       std::optional<std::size_t> length) {
  std::vector<std::pair<std::string, std::string>> block;
  block.reserve(headers.size() + 3);
  block.emplace_back(":status", std::to_string(status));
  block.emplace_back("server", "llmchaos");
  for (const auto& h : headers) {
    std::string name = h.first;
    for (auto& c : name) c = byte_scan::ascii_lower(c);
    if (left_out(name)) continue;
    block.emplace_back(std::move(name), h.second);
  }
  if (length) block.emplace_back("content-length", std::to_string(*length));
  return block;
}

Connection::Connection(mock::Http2Host& host)
    : host_(host),
      socket_(host.socket()),
      idle_(socket_.get_executor()),
      write_deadline_(socket_.get_executor()) {
  nghttp2_session_callbacks* callbacks = nullptr;
  nghttp2_session_callbacks_new(&callbacks);
  nghttp2_session_callbacks_set_on_begin_headers_callback(callbacks, &Connection::on_begin_headers);
  nghttp2_session_callbacks_set_on_header_callback(callbacks, &Connection::on_header);
  nghttp2_session_callbacks_set_on_frame_recv_callback(callbacks, &Connection::on_frame_recv);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(callbacks, &Connection::on_data_chunk);
  nghttp2_session_callbacks_set_on_stream_close_callback(callbacks, &Connection::on_stream_close);
  nghttp2_session_server_new(&session_, callbacks, this);
  nghttp2_session_callbacks_del(callbacks);
}

Connection::~Connection() {
  nghttp2_session_del(session_);
}

net::awaitable<void> Connection::run() {
  auto self = shared_from_this();
  host_.engine().count_event("http2_connection");
  start();
  co_await read_loop();
  co_await teardown();
}

// Our SETTINGS, then the bytes the HTTP/1.1 reader already took (the preface first).
void Connection::start() {
  const auto& o = host_.options();
  const std::array<nghttp2_settings_entry, 2> settings{{
      {NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, max_concurrent_streams},
      {NGHTTP2_SETTINGS_MAX_HEADER_LIST_SIZE, static_cast<std::uint32_t>(o.header_limit)},
  }};
  nghttp2_submit_settings(session_, NGHTTP2_FLAG_NONE, settings.data(), settings.size());
  const auto first = host_.received();
  feed(first.data(), first.size());
}

// Bytes from the client into nghttp2; what it answers (SETTINGS ACK, WINDOW_UPDATE, a GOAWAY on a protocol
// error) goes out with the next write. A fatal error ends the session with a GOAWAY.
void Connection::feed(const char* data, std::size_t size) {
  const auto rv = nghttp2_session_mem_recv(session_, reinterpret_cast<const std::uint8_t*>(data), size);
  if (rv < 0) {
    host_.engine().count_event("http2_protocol_error");
    nghttp2_session_terminate_session(session_, NGHTTP2_PROTOCOL_ERROR);
    close_after_write_ = true;
  }
  start_ready();
  flush();
}

void Connection::start_ready() {
  auto ready = std::move(ready_);
  ready_.clear();
  for (auto& s : ready) {
    ++live_;
    net::co_spawn(executor(), serve_stream(shared_from_this(), std::move(s)), net::detached);
  }
}

// Reads until the client leaves, nghttp2 wants nothing more, a reset plan closes the connection, or it
// has been idle (no stream open) for --idle-timeout-ms: then a GOAWAY (NO_ERROR) and the close.
net::awaitable<void> Connection::read_loop() {
  std::array<char, 16 * 1024> buf;
  const double idle_ms = host_.options().idle_timeout_ms;
  while (!closing_ && !host_.stopping() &&
         (nghttp2_session_want_read(session_) != 0 || nghttp2_session_want_write(session_) != 0)) {
    if (idle_ms > 0)
      idle_.expires_after(ms_duration(idle_ms));
    else
      idle_.expires_at(std::chrono::steady_clock::time_point::max());
    auto result =
        co_await (socket_.async_read_some(net::buffer(buf), use_tuple) || idle_.async_wait(use_tuple));
    if (result.index() == 1) {
      if (!streams_.empty() || writing_) continue;  // a stream is being answered or held: not idle
      host_.engine().count_event("idle_timeout");
      nghttp2_session_terminate_session(session_, NGHTTP2_NO_ERROR);
      close_after_write_ = true;
      flush();
      break;
    }
    auto [ec, n] = std::get<0>(result);
    if (ec) break;
    feed(buf.data(), n);
  }
}

// Every stream still open ends (its coroutine sees the close), then the writer and the coroutines are
// waited for: nothing of this connection runs once serve() returns.
net::awaitable<void> Connection::teardown() {
  closing_ = true;
  for (auto& [id, s] : streams_) {
    s->closed = true;
    s->signal.cancel();
  }
  streams_.clear();
  if (!writing_ && close_after_write_) close_socket();
  net::steady_timer pause(executor());
  while (live_ > 0 || writing_) {
    pause.expires_after(std::chrono::milliseconds(2));
    co_await pause.async_wait(use_tuple);
  }
}

void Connection::flush() {
  if (writing_ || socket_closed_) return;
  writing_ = true;
  net::co_spawn(executor(), write_loop(shared_from_this()), net::detached);
}

void Connection::collect(std::string& out) {
  while (out.size() < write_batch) {
    const std::uint8_t* data = nullptr;
    const auto n = nghttp2_session_mem_send(session_, &data);
    if (n <= 0) {
      if (n < 0) close_after_write_ = true;
      return;
    }
    out.append(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
  }
}

// The one writer: whatever nghttp2 has queued, in batches, until it has nothing more; then the close a
// GOAWAY asked for.
net::awaitable<void> Connection::write_loop(std::shared_ptr<Connection> /*alive while it writes*/) {
  std::string out;
  while (!socket_closed_) {
    out.clear();
    collect(out);
    if (out.empty()) break;
    // Bounded like every HTTP/1.1 write (--idle-timeout-ms): a client that stops reading is closed.
    const double idle_ms = host_.options().idle_timeout_ms;
    if (idle_ms > 0)
      write_deadline_.expires_after(ms_duration(idle_ms));
    else
      write_deadline_.expires_at(std::chrono::steady_clock::time_point::max());
    auto result = co_await (net::async_write(socket_, net::buffer(out), use_tuple) ||
                            write_deadline_.async_wait(use_tuple));
    bool failed = result.index() == 1;
    if (failed) host_.engine().count_event("idle_timeout");
    if (!failed) failed = static_cast<bool>(std::get<0>(std::get<0>(result)));
    if (failed) {
      closing_ = true;
      break;
    }
  }
  writing_ = false;
  if (close_after_write_ || closing_) close_socket();
}

void Connection::close_socket() {
  if (socket_closed_) return;
  socket_closed_ = true;
  closing_ = true;
  boost::system::error_code ec;
  socket_.shutdown(net::ip::tcp::socket::shutdown_both, ec);
  socket_.close(ec);
}

Stream* Connection::find(std::int32_t id) {
  const auto it = streams_.find(id);
  return it == streams_.end() ? nullptr : it->second.get();
}

bool Connection::submit_response(Stream& s, int status, const mock::HeaderList& headers,
                                 std::optional<std::size_t> length) {
  if (s.closed || s.responded || closing_) return false;
  const auto block = response_header_block(status, headers, length);
  std::vector<nghttp2_nv> nva;
  nva.reserve(block.size());
  for (const auto& h : block)
    nva.push_back({reinterpret_cast<std::uint8_t*>(const_cast<char*>(h.first.data())),
                   reinterpret_cast<std::uint8_t*>(const_cast<char*>(h.second.data())), h.first.size(),
                   h.second.size(), NGHTTP2_NV_FLAG_NONE});
  nghttp2_data_provider body{};
  body.source.ptr = &s;
  body.read_callback = &Connection::read_data;
  s.responded = nghttp2_submit_response(session_, s.id, nva.data(), nva.size(), &body) == 0;
  flush();
  return s.responded;
}

void Connection::push_data(Stream& s) {
  if (s.deferred && !s.closed) {
    s.deferred = false;
    nghttp2_session_resume_data(session_, s.id);
  }
  flush();
}

void Connection::reset_stream(Stream& s, std::uint32_t error_code) {
  if (s.closed || s.reset_sent || closing_) return;
  s.reset_sent = true;
  nghttp2_submit_rst_stream(session_, NGHTTP2_FLAG_NONE, s.id, error_code);
  flush();
}

void Connection::goaway() {
  if (closing_) return;
  nghttp2_submit_goaway(session_, NGHTTP2_FLAG_NONE, nghttp2_session_get_last_proc_stream_id(session_),
                        NGHTTP2_INTERNAL_ERROR, nullptr, 0);
  close_after_write_ = true;
  flush();
}

// A stream must not stay open once its coroutine is done: a hold's end (no HEADERS ever) is a reset
// (CANCEL); an answer sent whole while the client was still sending (413) ends its side too (NO_ERROR).
void Connection::end_stream(Stream& s) {
  if (s.closed || s.reset_sent || closing_) return;
  if (!s.eof_taken)
    reset_stream(s, NGHTTP2_CANCEL);
  else if (nghttp2_session_get_stream_remote_close(session_, s.id) == 0)
    reset_stream(s, NGHTTP2_NO_ERROR);
}

int Connection::on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto& c = *static_cast<Connection*>(user);
  if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST) return 0;
  auto s = std::make_shared<Stream>(frame->hd.stream_id, c.executor());
  s->req.protocol = WireProtocol::h2;
  s->req.target.clear();
  c.streams_.emplace(frame->hd.stream_id, std::move(s));
  return 0;
}

// A request header: the pseudo-headers the router needs, and the headers it reads (Router::reads_header);
// past the server's header limits the stream is answered 431 instead.
int Connection::on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                          std::size_t namelen, const std::uint8_t* value, std::size_t valuelen, std::uint8_t,
                          void* user) {
  auto& c = *static_cast<Connection*>(user);
  Stream* s = frame->hd.type == NGHTTP2_HEADERS ? c.find(frame->hd.stream_id) : nullptr;
  if (!s || s->refused || s->started) return 0;
  const auto& o = c.host_.options();
  s->header_bytes += namelen + valuelen + 32;  // a field's size as HPACK counts it (RFC 7541 4.1)
  if (++s->header_count > o.max_header_count || s->header_bytes > o.header_limit) {
    c.host_.engine().count_event("header_too_large");
    s->refused = 431;
    return 0;
  }
  const std::string_view n(reinterpret_cast<const char*>(name), namelen);
  const std::string_view v(reinterpret_cast<const char*>(value), valuelen);
  if (n == ":method")
    s->req.method.assign(v);
  else if (n == ":path")
    s->req.target.assign(v);
  else if (!n.empty() && n[0] != ':' && mock::Router::reads_header(n))
    s->req.headers.emplace_back(std::string(n), std::string(v));
  return 0;
}

// A request is whole at END_STREAM (on its HEADERS or its last DATA); a refused one is answered at once.
int Connection::on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user) {
  auto& c = *static_cast<Connection*>(user);
  if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA) return 0;
  const auto it = c.streams_.find(frame->hd.stream_id);
  if (it == c.streams_.end() || it->second->started) return 0;
  if (it->second->refused == 0 && (frame->hd.flags & NGHTTP2_FLAG_END_STREAM) == 0) return 0;
  it->second->started = true;
  c.ready_.push_back(it->second);
  return 0;
}

int Connection::on_data_chunk(nghttp2_session*, std::uint8_t, std::int32_t stream_id,
                              const std::uint8_t* data, std::size_t len, void* user) {
  auto& c = *static_cast<Connection*>(user);
  Stream* s = c.find(stream_id);
  if (!s || s->refused || s->started) return 0;
  if (s->req.body.size() + len > c.host_.options().body_limit) {
    c.host_.engine().count_event("body_too_large");
    s->refused = 413;
    s->req.body.clear();
    return 0;
  }
  s->req.body.append(reinterpret_cast<const char*>(data), len);
  return 0;
}

int Connection::on_stream_close(nghttp2_session*, std::int32_t stream_id, std::uint32_t, void* user) {
  auto& c = *static_cast<Connection*>(user);
  const auto it = c.streams_.find(stream_id);
  if (it == c.streams_.end()) return 0;
  it->second->closed = true;
  it->second->signal.cancel();
  c.streams_.erase(it);
  return 0;
}

// nghttp2 asks for a stream's DATA when the flow-control windows allow: what the outbox holds; none yet
// (a paced stream between frames): deferred until push_data resumes it.
ssize_t Connection::read_data(nghttp2_session*, std::int32_t, std::uint8_t* buf, std::size_t length,
                              std::uint32_t* flags, nghttp2_data_source* source, void*) {
  auto& s = *static_cast<Stream*>(source->ptr);
  const std::size_t n = std::min(length, s.outbox.size() - s.taken);
  if (n > 0) std::memcpy(buf, s.outbox.data() + s.taken, n);
  s.taken += n;
  if (s.taken < s.outbox.size()) return static_cast<ssize_t>(n);
  s.outbox.clear();
  s.taken = 0;
  s.signal.cancel();  // the coroutine waiting for its bytes to be taken goes on
  if (s.eof) {
    *flags |= NGHTTP2_DATA_FLAG_EOF;
    s.eof_taken = true;
  } else if (n == 0) {
    s.deferred = true;
    return NGHTTP2_ERR_DEFERRED;
  }
  return static_cast<ssize_t>(n);
}

}  // namespace llmchaos::http2
