#pragma once
// One HTTP/2 connection over nghttp2 (README.md): the read loop feeds nghttp2, one writer sends what it
// queued, and each stream whose request is whole runs as a coroutine of its own (stream.cpp) on the
// connection's executor, so nothing here needs a lock. Only I/O and nghttp2's bookkeeping: what to
// answer is the router's plan, how is execute_plan.hpp's.
#include <nghttp2/nghttp2.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "llmchaos/mockprovider/forward_hook.hpp"
#include "llmchaos/mockprovider/http2_hook.hpp"

namespace llmchaos::http2 {

// One request and its answer, shared by the connection (nghttp2's callbacks) and the stream's coroutine.
struct Stream {
  Stream(std::int32_t stream_id, const boost::asio::any_io_executor& executor)
      : id(stream_id), signal(executor) {}
  std::int32_t id;
  mock::RawRequest req;
  std::size_t header_bytes = 0, header_count = 0;
  int refused = 0;  // 431 (header block over the limits) or 413 (body over the limit): the router's reject
  bool started = false;  // its coroutine runs (the request is whole, or refused)
  bool closed = false;   // nghttp2 closed it: answered, reset by the client, or the connection ended
  // The answer's DATA not yet taken by nghttp2 (from `taken` on), and whether it ends the stream.
  std::string outbox;
  std::size_t taken = 0;
  bool eof = false, eof_taken = false, deferred = false, responded = false, reset_sent = false;
  boost::asio::steady_timer signal;  // wakes the stream's coroutine: a wait's end, its DATA taken, its close
};

// The response header block of an answer: :status first, then Server, the plan's headers (names
// lower-cased, HTTP/1.1's connection-specific ones left out: HTTP/2 forbids them) and, when known,
// content-length. Pure.
std::vector<std::pair<std::string, std::string>> response_header_block(int status,
                                                                       const mock::HeaderList& headers,
                                                                       std::optional<std::size_t> length);

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  explicit Connection(mock::Http2Host& host);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  boost::asio::awaitable<void> run();  // until the connection ends and every stream's coroutine is done

  // A stream's coroutine (stream.cpp) answers through these.
  mock::Http2Host& host() { return host_; }
  boost::asio::any_io_executor executor() { return socket_.get_executor(); }
  bool submit_response(Stream& s, int status, const mock::HeaderList& headers,
                       std::optional<std::size_t> length);
  void push_data(Stream& s);  // the outbox grew or eof was set: nghttp2 takes it as DATA
  void reset_stream(Stream& s, std::uint32_t error_code);
  void goaway();               // a reset plan: GOAWAY (INTERNAL_ERROR), then the connection closes
  void end_stream(Stream& s);  // the coroutine is done: a stream left open without END_STREAM is reset
  void stream_done() { --live_; }

 private:
  void start();
  void feed(const char* data, std::size_t size);
  boost::asio::awaitable<void> read_loop();
  boost::asio::awaitable<void> teardown();
  void flush();  // starts the writer unless it runs
  boost::asio::awaitable<void> write_loop(std::shared_ptr<Connection> self);
  void collect(std::string& out);
  void close_socket();
  void start_ready();  // the streams whose requests became whole during a feed
  Stream* find(std::int32_t id);

  static int on_begin_headers(nghttp2_session*, const nghttp2_frame* frame, void* user);
  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                       std::size_t namelen, const std::uint8_t* value, std::size_t valuelen,
                       std::uint8_t flags, void* user);
  static int on_frame_recv(nghttp2_session*, const nghttp2_frame* frame, void* user);
  static int on_data_chunk(nghttp2_session*, std::uint8_t flags, std::int32_t stream_id,
                           const std::uint8_t* data, std::size_t len, void* user);
  static int on_stream_close(nghttp2_session*, std::int32_t stream_id, std::uint32_t error_code, void* user);
  static ssize_t read_data(nghttp2_session*, std::int32_t stream_id, std::uint8_t* buf, std::size_t length,
                           std::uint32_t* flags, nghttp2_data_source* source, void* user);

  mock::Http2Host& host_;
  boost::asio::ip::tcp::socket& socket_;
  nghttp2_session* session_ = nullptr;
  std::unordered_map<std::int32_t, std::shared_ptr<Stream>> streams_;  // open in nghttp2
  std::vector<std::shared_ptr<Stream>> ready_;
  boost::asio::steady_timer idle_;
  boost::asio::steady_timer write_deadline_;  // each socket write's, --idle-timeout-ms
  std::size_t live_ = 0;                      // stream coroutines running
  bool writing_ = false;
  bool close_after_write_ = false;
  bool closing_ = false;
  bool socket_closed_ = false;
};

// A stream's coroutine: the request through the router, the plan carried out (execute_plan.hpp) on the
// stream as its wire, the ledger entry finished.
boost::asio::awaitable<void> serve_stream(std::shared_ptr<Connection> conn, std::shared_ptr<Stream> stream);

}  // namespace llmchaos::http2
