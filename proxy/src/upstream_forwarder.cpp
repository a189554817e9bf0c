// `llmchaos proxy`: a planned attempt forwarded to the route's upstream (Beast client, C++20
// coroutines, on the client session's own executor). The plan decides; the answer is delivered under it
// by answer_delivery.hpp (the same code that replays a cassette). With a record folder, every answer read
// to its end with a 2xx status is written as a cassette (cassette.hpp), atomically.
// Credentials are passed on untouched and never written: the ledger sees a redacted target only, a
// cassette the headers less secret_header() ones, and no header is logged.
#include <fmt/format.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "answer_delivery.hpp"
#include "llmchaos/core/atomic_file.hpp"
#include "llmchaos/core/byte_scan.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/core/sized_text.hpp"
#include "llmchaos/mockprovider/forward_hook.hpp"
#include "llmchaos/net/idle_socket.hpp"
#include "llmchaos/net/write_now.hpp"
#include "llmchaos/proxy/cassette.hpp"
#include "llmchaos/proxy/proxy.hpp"
#include "llmchaos/proxy/stream_edit.hpp"
#include "proxy_forwarder.hpp"
#include "upstream_connection.hpp"
#include "upstream_response.hpp"

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace llmchaos::proxy {

// The mock's vocabulary (plans, the forward hook, dialects, scripts) the proxy is written in.
using mock::ClientWire;
using mock::Engine;
using mock::Executed;
using mock::Forwarder;
using mock::ForwardRequest;
using mock::HeaderList;
using mock::Plan;
namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

using Clock = detail::DeliveryClock;
using detail::AnswerHead;
using detail::Exchange;
using detail::ms_since;

// Hop-by-hop and framing headers: the proxy frames each side of the exchange itself. A name whose length
// no entry has (most of them) is refused by one bit test, the rest compared only with entries of its length.
constexpr std::string_view hop_headers[] = {
    "connection",       "keep-alive", "transfer-encoding", "content-length", "te", "trailer", "upgrade",
    "proxy-connection", "host",       "accept-encoding",   "expect"};
constexpr std::uint32_t hop_lengths = [] {
  std::uint32_t bits = 0;
  for (const auto h : hop_headers) bits |= std::uint32_t{1} << h.size();
  return bits;
}();

bool hop_header(std::string_view name) {
  if (name.size() >= 32 || !(hop_lengths >> name.size() & 1)) return false;
  for (const auto h : hop_headers)
    if (byte_scan::iequals_lower(name, h)) return true;
  return false;
}

// The path below the route as the client sent it: the router saw the target with its keys masked, so
// the query comes from the original target.
struct UpstreamPath {
  std::string_view path, query;  // the query with its '?', or empty
};
UpstreamPath upstream_path(const ForwardRequest& req) {
  const auto query = req.target.find('?');
  return {std::string_view(req.path).substr(0, req.path.find('?')),
          query == std::string::npos ? std::string_view{} : std::string_view(req.target).substr(query)};
}

// An answer of the proxy itself when the upstream cannot be asked (no URL, connect or send failed).
net::awaitable<Executed> answer_error(ClientWire& client, int status, std::string message, bool keep_alive) {
  return detail::answer_error(client, status, std::move(message), "llmchaos_proxy", keep_alive);
}

// The proxy's answer when the upstream sent no head (closed, failed or timed out before one).
net::awaitable<Executed> no_answer(const Exchange& x, const UpstreamUrl& url, beast::error_code ec) {
  return answer_error(x.client, 502, fmt::format("upstream {}: no answer: {}", url.origin, ec.message()),
                      x.keep_alive);
}

// What a cassette keeps of a header list: no credential, no cookie, and no Server (the replaying server
// names itself).
HeaderList cassette_headers(const HeaderList& headers) {
  HeaderList out;
  for (const auto& [name, value] : headers) {
    std::string lower = name;
    for (auto& c : lower) c = byte_scan::ascii_lower(c);
    if (!secret_header(lower) && lower != "set-cookie" && lower != "server" && !hop_header(lower))
      out.emplace_back(name, value);
  }
  return out;
}

// Whether a pooled connection can carry another request (net/idle_socket.hpp).
bool still_open(UpstreamConnection& c) {
  auto& socket = c.tls ? beast::get_lowest_layer(*c.tls).socket() : c.plain->socket();
  return idle_socket_open(socket.native_handle());
}

// Upstream connections kept open between requests (keep-alive), per origin and per I/O executor: a
// connection is only reused by sessions on the executor it was made on (one io_context thread, or one
// session's strand with --threads > 1), so its timers never race. Idle ones are dropped after
// idle_ms, beyond max_idle, and all at once when the server stops (close_idle).
class ConnectionPool {
 public:
  std::unique_ptr<UpstreamConnection> take(std::string_view origin, const net::any_io_executor& executor) {
    std::lock_guard lock(mutex_);
    const auto now = Clock::now();
    // idle_ is in the order given back: the oldest first, so most calls stop at the first entry.
    if (!idle_.empty() && now - idle_.front().since > idle_for)
      std::erase_if(idle_, [&](const Idle& i) { return now - i.since > idle_for; });
    for (auto it = idle_.rbegin(); it != idle_.rend();)
      if (it->origin == origin && it->executor == executor) {
        auto c = std::move(it->connection);
        it = decltype(it)(idle_.erase(std::next(it).base()));
        if (still_open(*c)) return c;  // else its FIN (or a reset) came after the answer: dropped
      } else {
        ++it;
      }
    return nullptr;
  }
  void give(std::string_view origin, const net::any_io_executor& executor,
            std::unique_ptr<UpstreamConnection> c) {
    std::lock_guard lock(mutex_);
    if (idle_.size() >= max_idle) idle_.erase(idle_.begin());
    idle_.push_back({origin, executor, std::move(c), Clock::now()});
  }
  void clear() {
    std::lock_guard lock(mutex_);
    idle_.clear();
  }

 private:
  static constexpr std::size_t max_idle = 64;
  static constexpr auto idle_for = std::chrono::seconds(2);
  struct Idle {
    std::string_view origin;  // an UpstreamUrl's: the forwarder's URLs outlive its pool (no copy per give)
    net::any_io_executor executor;
    std::unique_ptr<UpstreamConnection> connection;
    Clock::time_point since;
  };
  std::mutex mutex_;
  std::vector<Idle> idle_;
};

class UpstreamForwarder final : public ProxyForwarder {
 public:
  explicit UpstreamForwarder(UpstreamOptions options) : options_(std::move(options)) {
    if (!options_.upstream.empty()) default_ = parse_upstream_url(options_.upstream);
    for (const auto& [route, url] : options_.routes) routes_.emplace(route, parse_upstream_url(url));
    tls_ = make_tls_context(options_.ca_file);
  }

  net::awaitable<Executed> forward(ClientWire& client, const ForwardRequest& req, const Plan& plan,
                                   bool keep_alive, Engine& engine, std::uint64_t seq) override;
  void close_idle() override { pool_.clear(); }

 private:
  const UpstreamUrl* url_of(std::string_view route) const {
    if (auto it = routes_.find(route); it != routes_.end()) return &it->second;
    return default_ ? &*default_ : nullptr;
  }

  UpstreamOptions options_;
  ConnectionPool pool_;
  std::optional<UpstreamUrl> default_;
  std::map<std::string, UpstreamUrl, std::less<>> routes_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
};

using ResponseParser = http::response_parser<http::buffer_body>;

// Parses the next structured element of the upstream's answer (the head, a piece of body, a chunk's
// framing) from `buffer`, reading from the stream only when the buffer holds too little: Beast's parser
// fed by hand, without its composed read operations (they cost more than the parsing: bench/proxy).
// An answer framed by the connection's close ends at EOF.
template <class Stream>
net::awaitable<beast::error_code> parse_some(Stream& stream, beast::flat_buffer& buffer,
                                             ResponseParser& parser, double timeout_ms) {
  beast::error_code ec;
  for (;;) {
    if (buffer.size() > 0) {
      buffer.consume(parser.put(buffer.data(), ec));
      if (ec != http::error::need_more) co_return ec == http::error::need_buffer ? beast::error_code() : ec;
      ec = {};
    }
    upstream_expires_after(stream, timeout_ms);
    auto [rec, n] = co_await stream.async_read_some(buffer.prepare(16 * 1024), use_tuple);
    buffer.commit(n);
    if (rec == net::error::eof && !parser.is_done() && parser.got_some()) {
      parser.put_eof(ec);
      co_return ec;
    }
    if (rec) co_return rec;
  }
}

// The upstream's body as a Source of answer_delivery.hpp: read piece by piece as it arrives (and handed
// to the recorder, if any, with its time after the head).
template <class Stream>
struct UpstreamSource {
  Stream& stream;
  beast::flat_buffer& buffer;
  ResponseParser& parser;
  double timeout_ms;
  CassetteRecorder* recorder;
  Clock::time_point head_at;

  template <class Take>
  net::awaitable<bool> read(Take take) {
    std::array<char, 16 * 1024> piece;
    while (!parser.is_done()) {
      parser.get().body().data = piece.data();
      parser.get().body().size = piece.size();
      if (co_await parse_some(stream, buffer, parser, timeout_ms)) co_return false;
      const std::size_t got = piece.size() - parser.get().body().size;
      if (got == 0) continue;
      const std::string_view bytes(piece.data(), got);
      if (recorder) recorder->on_bytes(bytes, ms_since(head_at));
      if (!co_await take(bytes)) co_return false;
    }
    if (recorder && !recorder->complete()) recorder->on_end(ms_since(head_at));
    co_return true;
  }
};

// The request as the client sent it, on the upstream's path, credentials untouched: one head written
// with the body in one gathered write (no serializer), rendered into the connection's own string.
void request_head(const ForwardRequest& req, const UpstreamUrl& url, std::string& out) {
  using namespace std::string_view_literals;
  const UpstreamPath up = upstream_path(req);  // not a structured binding: clang 14 cannot capture one
  const bool body_expected = req.method == "POST" || req.method == "PUT" || req.method == "PATCH";
  const bool length = !req.body.empty() || body_expected;
  const fmt::format_int length_digits(req.body.size());
  // Sized, then written in one pass (core/sized_text.hpp): formatting piece by piece cost a tenth of a
  // proxied request's instructions (bench/README.md, proxy).
  render_sized_into(out, [&](auto& put) {
    put(std::string_view(req.method));
    put(" "sv);
    put(std::string_view(url.prefix));
    put(up.path);
    put(up.query);
    put(" HTTP/1.1\r\n"sv);
    for (const auto& [name, value] : req.headers) {
      if (hop_header(name)) continue;
      put(std::string_view(name));
      put(": "sv);
      put(std::string_view(value));
      put("\r\n"sv);
    }
    // SSE frames are read, so never compressed; keep-alive is HTTP/1.1's default, the connection goes
    // back to the pool when the answer is read whole.
    put("Host: "sv);
    put(std::string_view(url.host_header));
    put("\r\nAccept-Encoding: identity\r\n"sv);
    if (length) {
      put("Content-Length: "sv);
      put(length_digits);
      put("\r\n"sv);
    }
    put("\r\n"sv);
  });
}

// The part of the request a plain socket takes at once (no composed operation, no coroutine frame, one
// pass through Asio's scheduler less per request); a TLS stream takes none here.
template <class Stream>
std::size_t send_now(Stream& stream, const std::array<net::const_buffer, 2>& request, beast::error_code& ec) {
  if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
    return llmchaos::write_now(stream.socket(), request, ec);  // non-blocking since connect_upstream
  } else {
    return 0;
  }
}

// The rest of the request (all of a TLS upstream's) by the composed write.
template <class Stream>
net::awaitable<beast::error_code> send_rest(Stream& stream, const std::array<net::const_buffer, 2>& request,
                                            std::size_t sent, double timeout_ms) {
  beast::buffers_suffix<std::array<net::const_buffer, 2>> rest(request);
  rest.consume(sent);
  upstream_expires_after(stream, timeout_ms);
  auto [wec, wn] = co_await net::async_write(stream, rest, use_tuple);
  co_return wec;
}

// A connection from the pool (`pooled`) may have been closed by the upstream while it was idle (`stale`: the
// request is sent again on a new one); one whose answer was read whole and may stay open is `reusable`.
struct Reuse {
  bool pooled = false;
  bool stale = false;
  bool reusable = false;
};

// GCC 12's false -Wmismatched-new-delete on Asio's frame allocator (DEVELOPERS.md), silenced down to the
// forwarder.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
// One read of the upstream's answer into `buffer`, within timeout_ms: on a plain connection bounded by its
// ReadDeadline on the bare socket (Beast's stream would arm and cancel a timer per read: one more pass
// through the scheduler and one more epoll_wait each, bench/README.md, proxy), on a TLS one by the TCP
// stream's own timer. read_ended() turns the deadline's cancellation into Beast's timeout error.
template <class Stream>
auto read_some_within(Stream& stream, PlainReads* plain, beast::flat_buffer& buffer, double timeout_ms) {
  if constexpr (std::is_same_v<Stream, beast::tcp_stream>) {
    plain->deadline.arm(ms_duration(timeout_ms));
    return plain->socket.async_read_some(buffer.prepare(16 * 1024), use_tuple);
  } else {
    upstream_expires_after(stream, timeout_ms);
    return stream.async_read_some(buffer.prepare(16 * 1024), use_tuple);
  }
}
beast::error_code read_ended(PlainReads* plain, beast::error_code ec) {
  if (!plain) return ec;
  plain->deadline.disarm();
  return ec == net::error::operation_aborted && plain->deadline.timed_out() ? beast::error::timeout : ec;
}

// The upstream's body without Beast's parser (upstream_response.hpp): the bytes after the head already in
// `buffer`, then what arrives; a Content-Length body to its length, a chunked one to its last chunk.
template <class Stream>
struct PlainUpstreamSource {
  Stream& stream;
  beast::flat_buffer& buffer;
  PlainReads* plain;                    // null on TLS (read_some_within)
  std::optional<std::uint64_t> length;  // none: chunked
  double timeout_ms;
  CassetteRecorder* recorder;
  Clock::time_point head_at;
  ChunkedBody chunks{};
  bool whole = false;  // read to its end

  // The whole body, taken as read, when it is already in the buffer (a Content-Length answer that came
  // with its head) and nothing records it: a view of the buffer, valid until its next read (consume moves
  // no byte). deliver_small writes it as it is, without copying it into a string of its own.
  std::optional<std::string_view> take_whole_if_held() {
    if (!length || recorder || buffer.size() < *length) return std::nullopt;
    const std::string_view body(static_cast<const char*>(buffer.data().data()),
                                static_cast<std::size_t>(*length));
    buffer.consume(body.size());
    whole = true;
    return body;
  }

  // Whether read() hands body bytes to its take before it next waits on the socket (a copy of the chunk
  // decoder tries the buffer: the same decoding, nothing consumed).
  bool body_in_hand() const {
    std::string_view held(static_cast<const char*>(buffer.data().data()), buffer.size());
    if (length) return *length > 0 && !held.empty();
    ChunkedBody probe = chunks;
    for (int step = 0; step < 3; ++step) {  // at most a chunk's end, its size line, then its data
      const auto s = probe.next(held);
      if (!s.data.empty()) return true;
      if (s.consumed == 0) return false;
      held.remove_prefix(s.consumed);
    }
    return false;
  }

  template <class Take>
  net::awaitable<bool> read(Take take) {
    std::uint64_t left = length.value_or(0);
    const auto finished = [&] { return length ? left == 0 : chunks.done(); };
    while (!finished()) {
      std::string_view held(static_cast<const char*>(buffer.data().data()), buffer.size());
      while (!held.empty() && !finished()) {
        std::string_view bytes;
        std::size_t used = 0;
        if (length) {
          used = static_cast<std::size_t>(std::min<std::uint64_t>(left, held.size()));
          bytes = held.substr(0, used);
          left -= used;
        } else {
          const auto step = chunks.next(held);
          if (chunks.failed()) co_return false;
          if (step.consumed == 0) break;  // a chunk's size line is still coming
          bytes = step.data;
          used = step.consumed;
        }
        if (!bytes.empty()) {
          if (recorder) recorder->on_bytes(bytes, ms_since(head_at));
          if (!co_await take(bytes)) co_return false;
        }
        buffer.consume(used);  // the held view stays valid: consume moves no byte
        held.remove_prefix(used);
      }
      if (finished()) break;
      auto [ec, n] = co_await read_some_within(stream, plain, buffer, timeout_ms);
      buffer.commit(n);
      if (read_ended(plain, ec)) co_return false;  // closed or failed before the end: the answer broke off
    }
    whole = true;
    if (recorder && !recorder->complete()) recorder->on_end(ms_since(head_at));
    co_return true;
  }
};

// The head read by the fast pass while it can (HeadVerdict), the rest left in `buffer`; an error of the
// read when the upstream gave no head.
template <class Stream>
net::awaitable<beast::error_code> read_plain_head(Stream& stream, UpstreamReading& reading,
                                                  HeadVerdict& verdict, double timeout_ms) {
  auto& buffer = reading.buffer;
  auto* const plain = reading.plain_reads.get();
  for (;;) {
    if (buffer.size() > 0) {
      verdict = read_upstream_head(
          std::string_view(static_cast<const char*>(buffer.data().data()), buffer.size()), reading.head);
      if (verdict != HeadVerdict::need_more) co_return beast::error_code();
    }
    auto [ec, n] = co_await read_some_within(stream, plain, buffer, timeout_ms);
    buffer.commit(n);
    if (const auto end = read_ended(plain, ec)) co_return end;
  }
}

// The answer's head as delivered: hop-by-hop fields left out (the proxy frames each side itself). `head` is
// the connection's own (UpstreamReading::answer), its strings reused from the previous answer.
template <class Fields>
void fill_answer_head(int status, const Fields& fields, std::optional<std::uint64_t> length,
                      AnswerHead& head) {
  head.status = status;
  std::size_t n = 0;
  std::string_view content_type;
  for (const auto& [name, value] : fields) {
    if (byte_scan::iequals_lower(name, "content-type")) content_type = value;
    if (hop_header(name)) continue;
    if (n == head.headers.size()) head.headers.emplace_back();
    assign_reusing(head.headers[n].first, name);
    assign_reusing(head.headers[n].second, value);
    ++n;
  }
  head.headers.resize(n);
  head.sse = streamed_content_type(content_type);
  head.length = length;  // a Content-Length answer keeps it
}

// An answer the fast pass does not read, by Beast's parser from the same bytes.
template <class Stream>
net::awaitable<void> deliver_by_beast(Exchange& x, Stream& stream, UpstreamReading& reading,
                                      const UpstreamUrl& url, Dialect dialect, double read_timeout_ms,
                                      CassetteRecorder* recorder, Reuse& reuse) {
  auto& buffer = reading.buffer;
  ResponseParser parser;
  parser.body_limit(boost::none);
  beast::error_code hec;
  while (!hec && !parser.is_header_done()) hec = co_await parse_some(stream, buffer, parser, read_timeout_ms);
  if (hec) {
    x.out = co_await no_answer(x, url, hec);
    co_return;
  }
  x.head_ms = ms_since(x.t0);
  std::vector<std::pair<std::string_view, std::string_view>> fields;
  for (const auto& f : parser.get()) fields.emplace_back(f.name_string(), f.value());
  std::optional<std::uint64_t> length;
  if (const auto n = parser.content_length()) length = *n;
  AnswerHead& head = reading.answer;
  fill_answer_head(parser.get().result_int(), fields, length, head);
  if (recorder) recorder->on_head(head.status, cassette_headers(head.headers), x.head_ms, head.sse);
  UpstreamSource<Stream> source{stream, buffer, parser, read_timeout_ms, recorder, Clock::now()};
  co_await detail::deliver(x, head, source, dialect);
  reuse.reusable = parser.is_done() && parser.keep_alive();
}

// One request and its answer on one upstream connection: sent at once, the head read by the fast pass
// (Beast's parser reads what that pass leaves), the answer delivered under the plan.
template <class Stream>
[[gnu::noinline]] net::awaitable<void> exchange(Exchange& x, Stream& stream, UpstreamReading& reading,
                                                const ForwardRequest& req, const UpstreamUrl& url,
                                                Dialect dialect, double read_timeout_ms,
                                                CassetteRecorder* recorder, Reuse& reuse) {
  request_head(req, url, reading.request_head);
  const std::array<net::const_buffer, 2> request{net::buffer(reading.request_head), net::buffer(req.body)};
  beast::error_code wec;
  const std::size_t sent = send_now(stream, request, wec);
  if (!wec && sent < net::buffer_size(request))
    wec = co_await send_rest(stream, request, sent, read_timeout_ms);
  if (wec && reuse.pooled) {  // a kept connection the upstream closed meanwhile: the caller connects anew
    reuse.stale = true;
    co_return;
  }
  if (wec) {
    x.out = co_await answer_error(
        x.client, 502, fmt::format("upstream {}: sending the request failed: {}", url.origin, wec.message()),
        x.keep_alive);
    co_return;
  }

  auto& buffer = reading.buffer;
  buffer.consume(buffer.size());  // an answer read whole leaves nothing; any other connection is not reused
  auto& plain = reading.head;
  HeadVerdict verdict = HeadVerdict::beast;  // a HEAD's answer has a length but no body: Beast's rules
  beast::error_code hec;
  if (req.method != "HEAD") hec = co_await read_plain_head(stream, reading, verdict, read_timeout_ms);
  if (hec && hec != beast::error::timeout && reuse.pooled && buffer.size() == 0) {
    reuse.stale =
        true;  // closed (EOF, RST, a TLS close) without a byte of answer: the request was never read
    co_return;
  }
  if (hec) {
    x.out = co_await no_answer(x, url, hec);
    co_return;
  }
  if (verdict != HeadVerdict::ready) {  // Beast reads it from the same bytes
    co_await deliver_by_beast(x, stream, reading, url, dialect, read_timeout_ms, recorder, reuse);
    co_return;
  }
  x.head_ms = ms_since(x.t0);
  buffer.consume(plain.head_bytes);
  AnswerHead& head = reading.answer;
  fill_answer_head(plain.status, plain.fields, plain.content_length, head);
  if (recorder) recorder->on_head(head.status, cassette_headers(head.headers), x.head_ms, head.sse);
  PlainUpstreamSource<Stream> source{
      stream,   buffer,      reading.plain_reads.get(), plain.content_length, read_timeout_ms,
      recorder, Clock::now()};
  co_await detail::deliver(x, head, source, dialect);
  reuse.reusable = source.whole && plain.keep_alive;
}
#pragma GCC diagnostic pop

net::awaitable<Executed> UpstreamForwarder::forward(ClientWire& client, const ForwardRequest& req,
                                                    const Plan& plan, bool keep_alive, Engine& engine,
                                                    std::uint64_t seq) {
  Executed out;
  if (plan.latency_ms > 0) {  // a coroutine only when there is a wait (one frame less per request)
    if (!co_await detail::wait_latency(client, plan, out)) co_return out;
  }
  const auto* url = url_of(req.route);
  if (!url) {
    engine.note_upstream(seq, 0, 0, 0);
    co_return co_await answer_error(
        client, 502,
        fmt::format(
            "route \"{}\" has no upstream: give it `upstream = \"URL\"` or start the proxy with --upstream",
            req.route),
        keep_alive);
  }
  const Dialect dialect = plan.dialect;
  std::optional<CassetteRecorder> recorder;
  if (!options_.record_dir.empty()) {
    Cassette c;
    c.dialect = dialect;
    c.method = req.method;
    c.path = req.path;
    c.key = cassette_key(dialect, c.method, c.path, req.body);
    c.request_headers = cassette_headers(req.headers);
    c.request_body = req.body;
    recorder.emplace(std::move(c));
  }
  Exchange x{client, plan, keep_alive};
  std::string error;
  auto* rec = recorder ? &*recorder : nullptr;
  Reuse reuse;
  std::unique_ptr<UpstreamConnection> connection;
  const auto executor = client.executor();  // a type-erased copy: made once
  for (int tries = 0; tries < 2; ++tries) {
    connection = pool_.take(url->origin, executor);
    reuse = Reuse{connection != nullptr};
    if (!connection)
      connection = co_await connect_upstream(executor, *url, *tls_, options_.connect_timeout_ms, error);
    if (!connection) {
      engine.note_upstream(seq, 0, ms_since(x.t0), ms_since(x.t0));
      co_return co_await answer_error(client, 502, fmt::format("upstream {}: {}", url->origin, error),
                                      keep_alive);
    }
    if (connection->tls)
      co_await exchange(x, *connection->tls, connection->reading, req, *url, dialect,
                        options_.read_timeout_ms, rec, reuse);
    else
      co_await exchange(x, *connection->plain, connection->reading, req, *url, dialect,
                        options_.read_timeout_ms, rec, reuse);
    if (!reuse.stale) break;
  }
  if (reuse.reusable) pool_.give(url->origin, executor, std::move(connection));
  engine.note_upstream(seq, x.upstream_status, x.head_ms, x.upstream_ms.value_or(ms_since(x.t0)),
                       x.response_id);
  // Only a whole healthy answer becomes a cassette: an error or a broken-off read is not replayed as healthy.
  if (recorder && recorder->complete() && x.upstream_status / 100 == 2) {
    const auto& c = recorder->cassette();
    try {
      write_file_atomic(options_.record_dir + "/" + cassette_file_name(c.key), cassette_json(c));
    } catch (const std::exception&) {
      engine.count_event("cassette_write_failed");
    }
  }
  co_return x.out;
}

}  // namespace

std::shared_ptr<Forwarder> make_upstream_forwarder(UpstreamOptions options) {
  return std::make_shared<UpstreamForwarder>(std::move(options));
}

}  // namespace llmchaos::proxy
