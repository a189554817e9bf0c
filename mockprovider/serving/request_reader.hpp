#pragma once
// The request reader: one HTTP/1.1 request off a connection, as a request, a rejection (with the answer's
// status: the session writes it), a hand-over to HTTP/2, or an end. It never writes an answer (only
// Beast's 100 Continue, which is part of reading a body) and never counts an event: ReadResult says which.
//
// The fast way (fast_head.hpp) while the request fits, waiting for bytes under the read deadline
// (net/read_deadline.hpp: one timer per connection that each read only moves); Beast's parser for
// whatever the fast way leaves (fast_head.hpp's needs_beast_parser, the bytes already buffered included),
// under Beast's expires_after. Syscalls per request are what a plain answer costs most (each is about
// 1 us on this kind of VM), then passes through Asio's scheduler, so the hot path is split in steps the
// session's own coroutine runs inline (a coroutine of its own would cost a frame per request):
// - buffered(): a pipelined request may be there already;
// - with nothing buffered, the session first yields once to the other ready handlers (a post: no
//   syscall, the answer is already written), as nginx reads only once epoll says so: under load the
//   client's next request has usually arrived by then (yield_first());
// - read_now(): a plain non-blocking recv (async_read_some's immediate success would be one more pass
//   through the scheduler); a client one at a time misses it so often that it is skipped
//   (net/read_backoff.hpp);
// - while waits_for_bytes(): the reactor's wait (more_bytes(): Asio's async_read_some, a recv first, then
//   the edge-triggered registration) under the deadline, each read's bytes parsed by took();
// - read_rest(), a coroutine, only for what the fast way leaves: protocol detection on a connection's
//   first request, Beast's parser, or the end.
// (the syscall counts per request this gave: bench/README.md, mock_throughput).
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <cstddef>
#include <string>
#include <string_view>

#include "llmchaos/core/clock.hpp"
#include "llmchaos/mockprovider/fast_head.hpp"
#include "llmchaos/mockprovider/router.hpp"
#include "llmchaos/net/read_backoff.hpp"
#include "llmchaos/net/read_deadline.hpp"

namespace llmchaos::mock {

struct ReaderOptions {
  FastHeadLimits limits;      // keep_all_headers: headers_kept.every
  HeadersKept headers_kept;   // the router's (Router::headers_kept)
  double idle_ms = 30000;     // each read's deadline; 0: every request is Beast's
  bool detect_http2 = false;  // a connection's first request may be the h2c preface (protocol_detect.hpp)
};

struct ReadResult {
  enum class Kind {
    pending,   // no whole request yet: read_rest()
    request,   // `req` holds it
    rejected,  // answer `status` (413, 414, 431, 400), then close
    http2,     // the connection is HTTP/2's: the bytes read are in the reader's buffer
    end,       // the connection ends (the client left, a read failed or timed out, the server stops)
  };
  Kind kind = Kind::pending;
  bool keep_alive = false;  // request: no `Connection: close` (or HTTP/1.0 without keep-alive)
  int status = 0;           // rejected
  std::string_view event;   // rejected, end: the server event to count ("": none, a normal end)
  std::string_view target;  // rejected: the request's target where it was read (413's route dialect);
                            // the reader's, valid until its next read
};

// The event a connection's read (or write) that failed with `ec` counts: none for a normal end (the
// client closed, the server stops), idle_timeout, read_error (write_error).
std::string_view connection_event(boost::system::error_code ec, bool stopping, bool write = false);

class RequestReader {
 public:
  // `stopping` is the session's flag, set by its cancel().
  RequestReader(boost::beast::tcp_stream& stream, ReaderOptions options, const bool& stopping);

  boost::beast::flat_buffer& buffer() { return buffer_; }
  std::string_view received() const;  // the bytes read and not yet consumed

  // The request already in the buffer (pending when there is none, or it is not whole).
  ReadResult buffered(RawRequest& req);
  // Whether the session should yield once before read_now() (see above).
  bool yield_first(const ReadResult& got) {
    return got.kind == ReadResult::Kind::pending && verdict_ == FastHead::need_more && fast() &&
           backoff_.try_now();
  }
  // One non-blocking recv, and the fast parse of what it brought; notes a miss or a find for the backoff.
  ReadResult read_now(RawRequest& req);
  // Whether the request may still come the fast way: wait for more bytes.
  bool waits_for_bytes(const ReadResult& got) const {
    return got.kind == ReadResult::Kind::pending && verdict_ == FastHead::need_more && !failed_ && fast() &&
           !stopping_;
  }
  // The next read of the wait: a deferred operation, which co_await runs in the session's own frame
  // (use_awaitable would build a child frame per read);
  // the first one arms the deadline, which bounds the whole wait.
  auto more_bytes() {
    if (!waiting_) deadline_.arm(ms_duration(options_.idle_ms));
    waiting_ = true;
    return stream_.socket().async_read_some(buffer_.prepare(8192),
                                            boost::asio::as_tuple(boost::asio::deferred));
  }
  // What a read of the wait brought; the deadline is disarmed once the wait is over.
  ReadResult took(RawRequest& req, boost::system::error_code ec, std::size_t n);
  // The rest of a pending read: detect the protocol on the connection's `first` request, then Beast's
  // parser; or the end (the read failed, the server stops).
  boost::asio::awaitable<ReadResult> read_rest(RawRequest& req, bool first);

 private:
  bool fast() const { return options_.idle_ms > 0; }
  FastHead parse_fast(RawRequest& req, ReadResult& got);
  boost::asio::awaitable<ReadResult> read_with_beast(RawRequest& req);
  void arm();

  boost::beast::tcp_stream& stream_;
  boost::beast::flat_buffer buffer_;
  ReaderOptions options_;
  const bool& stopping_;
  FastHead verdict_ = FastHead::need_more;  // pending: more bytes, or Beast's parser (needs_beast_parser)
  boost::system::error_code failed_;        // a read failed with nothing buffered (or timed out)
  bool waiting_ = false;                    // the deadline is armed
  std::string rejected_target_;             // ReadResult::target of a rejection
  ReadDeadline deadline_;
  ReadBackoff backoff_;
};

}  // namespace llmchaos::mock
