#include "llmchaos/client/http_transport.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <chrono>
#include <future>
#include <map>
#include <optional>
#include <thread>
#include <vector>

#include "llmchaos/client/dialect_codec.hpp"
#include "llmchaos/client/response_reader.hpp"
#include "llmchaos/net/http_call.hpp"

namespace llmchaos::client {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

namespace {

constexpr auto use_tuple = asio::as_tuple(asio::use_awaitable);

std::chrono::steady_clock::duration ms(double v) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double, std::milli>(std::max(v, 1.0)));
}

std::string lower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) { return std::tolower(c); });
  return out;
}

// A kept-alive connection is only worth reusing if the server has not closed it meanwhile: a
// non-blocking peek says "would block" exactly when the socket is open and has nothing unread.
bool still_open(tcp::socket& socket) {
  beast::error_code ec;
  socket.non_blocking(true, ec);
  if (ec) return false;
  char byte;
  socket.receive(asio::buffer(&byte, 1), tcp::socket::message_peek, ec);
  const bool open = ec == asio::error::would_block;
  socket.non_blocking(false, ec);
  return open;
}

void close(beast::tcp_stream& stream) {
  beast::error_code ignore;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignore);
  stream.socket().close(ignore);
}

using HttpRequest = http::request<http::string_body>;
using ResponseParser = http::response_parser<http::buffer_body>;

// Why an attempt ended before its response head was read.
struct Failure {
  TransportEvent event;
  std::string what;
};

// The response head: the attempt timeout covers the whole wait for it. On failure the stream is closed.
asio::awaitable<std::optional<Failure>> read_head(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                                  ResponseParser& parser,
                                                  std::chrono::steady_clock::duration timeout,
                                                  ResponseReader& reader) {
  stream.expires_after(timeout);
  auto [hec, head_bytes] = co_await http::async_read_header(stream, buffer, parser, use_tuple);
  if (hec) {
    close(stream);
    const bool some = parser.got_some() || buffer.size() > 0;
    if (hec == beast::error::timeout)
      co_return Failure{TransportEvent::timeout_no_byte,
                        some ? "timeout inside the response head" : "timeout, no response byte"};
    co_return Failure{TransportEvent::reset_before_response,
                      (some ? "closed inside the response head: " : "no response: ") + hec.message()};
  }
  Headers headers;
  for (const auto& field : parser.get())
    headers.emplace_back(lower(field.name_string()), std::string(field.value()));
  reader.head(static_cast<int>(parser.get().result_int()), std::move(headers));
  co_return std::nullopt;
}

// The body, read as it comes until done or the reader stops; every read may wait at most the attempt
// timeout (an idle gap). Returns the error that broke it, if any.
asio::awaitable<beast::error_code> read_body(beast::tcp_stream& stream, beast::flat_buffer& buffer,
                                             ResponseParser& parser,
                                             std::chrono::steady_clock::duration timeout,
                                             ResponseReader& reader) {
  std::array<char, 16 * 1024> chunk;
  while (!parser.is_done() && !reader.stopped()) {
    parser.get().body().data = chunk.data();
    parser.get().body().size = chunk.size();
    stream.expires_after(timeout);
    auto [rec, n] = co_await http::async_read_some(stream, buffer, parser, use_tuple);
    if (rec == http::error::need_buffer) rec = {};
    reader.feed(std::string_view(chunk.data(), chunk.size() - parser.get().body().size));
    if (rec) co_return rec;
  }
  co_return beast::error_code{};
}

}  // namespace

struct HttpTransport::Impl {
  using Stream = std::unique_ptr<beast::tcp_stream>;
  using TokenFn = std::function<void(std::string_view)>;

  explicit Impl(HttpTransportOptions o) : options(std::move(o)), thread([this] { ioc.run(); }) {}
  ~Impl() {
    asio::post(ioc, [this] { idle.clear(); });
    work.reset();
    thread.join();
  }

  asio::awaitable<AttemptResult> attempt(const AttemptRequest& req, Clock& clock, const TokenFn& on_token);
  HttpRequest build_request(const AttemptRequest& req, const net::Url& url, const std::string& key) const;
  // A connected stream the request was written to, or why there is none.
  struct Sent {
    Stream stream;
    std::optional<Failure> failure;
  };
  asio::awaitable<Sent> send_request(const net::Url& url, const std::string& key, const HttpRequest& hreq,
                                     double timeout_ms);
  // A connection to host:port, reused when one is idle and still open; nullptr + error when connecting
  // failed.
  asio::awaitable<Stream> connect(const net::Url& url, const std::string& key, double timeout_ms,
                                  bool& reused, std::string& error);
  void release(const std::string& key, Stream stream) {
    auto& pool = idle[key];
    if (pool.size() < options.max_idle_per_host) pool.push_back(std::move(stream));
  }

  HttpTransportOptions options;
  asio::io_context ioc;
  asio::executor_work_guard<asio::io_context::executor_type> work{ioc.get_executor()};
  std::map<std::string, std::vector<Stream>> idle;  // touched only on the io thread
  std::atomic<int> connects{0}, reused{0}, stale_dropped{0}, stale_resent{0};
  std::thread thread;  // last: starts once everything above exists
};

asio::awaitable<HttpTransport::Impl::Stream> HttpTransport::Impl::connect(const net::Url& url,
                                                                          const std::string& key,
                                                                          double timeout_ms, bool& was_reused,
                                                                          std::string& error) {
  was_reused = false;
  auto& pool = idle[key];
  while (!pool.empty()) {
    Stream s = std::move(pool.back());
    pool.pop_back();
    if (still_open(s->socket())) {
      was_reused = true;
      ++reused;
      co_return s;
    }
    ++stale_dropped;
  }
  tcp::resolver resolver(ioc);
  auto [rec, endpoints] = co_await resolver.async_resolve(url.host, std::to_string(url.port), use_tuple);
  if (rec) {
    error = "resolve " + url.host + ": " + rec.message();
    co_return nullptr;
  }
  auto stream = std::make_unique<beast::tcp_stream>(ioc);
  stream->expires_after(ms(std::min(options.connect_timeout_ms, timeout_ms)));
  auto [cec, ep] = co_await stream->async_connect(endpoints, use_tuple);
  if (cec) {
    error = fmt::format("connect {}: {}", key, cec == beast::error::timeout ? "timeout" : cec.message());
    co_return nullptr;
  }
  ++connects;
  beast::error_code ignore;
  stream->socket().set_option(tcp::no_delay(true), ignore);
  co_return stream;
}

HttpRequest HttpTransport::Impl::build_request(const AttemptRequest& req, const net::Url& url,
                                               const std::string& key) const {
  const DialectCodec& codec = codec_for(req.endpoint.dialect);
  http::request<http::string_body> hreq{http::string_to_verb(attempt_method(req)),
                                        url.path + codec.target(req), 11};
  hreq.set(http::field::host, key);
  hreq.set(http::field::user_agent, options.user_agent);
  hreq.set(http::field::content_type, "application/json");
  hreq.set(http::field::accept, "application/json");  // as the SDKs, also for streams
  if (!req.operation_id.empty()) hreq.set("Idempotency-Key", req.operation_id);
  for (const auto& [name, value] : request_headers(req, options.api_key)) hreq.set(name, value);
  for (const auto& [name, value] : options.extra_headers) hreq.set(name, value);
  hreq.keep_alive(true);
  hreq.body() = codec.request_body(req);
  hreq.prepare_payload();
  return hreq;
}

asio::awaitable<HttpTransport::Impl::Sent> HttpTransport::Impl::send_request(const net::Url& url,
                                                                             const std::string& key,
                                                                             const HttpRequest& hreq,
                                                                             double timeout_ms) {
  // A kept-alive connection the server closed under us fails the write before the server could have
  // read the request: that is not an attempt failure, so it is resent once on a new connection.
  for (int tries = 0; tries < 2; ++tries) {
    bool was_reused = false;
    std::string error;
    Stream stream = co_await connect(url, key, timeout_ms, was_reused, error);
    if (!stream) co_return Sent{nullptr, Failure{TransportEvent::connect_failed, error}};
    stream->expires_after(ms(timeout_ms));
    auto [wec, written] = co_await http::async_write(*stream, hreq, use_tuple);
    if (!wec) co_return Sent{std::move(stream), std::nullopt};
    close(*stream);
    if (was_reused && tries == 0) {
      ++stale_resent;
      continue;
    }
    co_return Sent{nullptr, Failure{TransportEvent::reset_before_response, "write: " + wec.message()}};
  }
  co_return Sent{};  // not reached: the second try always returns
}

asio::awaitable<AttemptResult> HttpTransport::Impl::attempt(const AttemptRequest& req, Clock& clock,
                                                            const TokenFn& on_token) {
  // Reading the answer (head, SSE events, how the body ended) is shared with the virtual-time transport.
  ResponseReader reader(req, on_token);
  reader.result().started_ms = clock.now_ms();
  auto fail = [&](const Failure& failure) {
    reader.fail(failure.event, failure.what);
    reader.result().ended_ms = clock.now_ms();
    return reader.take();
  };
  net::Url url;
  try {
    url = net::parse_url(req.endpoint.base_url);
  } catch (const std::exception& e) {
    co_return fail({TransportEvent::connect_failed, e.what()});
  }
  const std::string key = fmt::format("{}:{}", url.host, url.port);
  const HttpRequest hreq = build_request(req, url, key);
  const auto timeout = ms(req.timeout_ms);

  Sent sent = co_await send_request(url, key, hreq, req.timeout_ms);
  if (sent.failure) co_return fail(*sent.failure);
  Stream stream = std::move(sent.stream);

  beast::flat_buffer buffer;
  ResponseParser parser;
  parser.body_limit(options.body_limit);
  if (auto failure = co_await read_head(*stream, buffer, parser, timeout, reader)) co_return fail(*failure);
  const beast::error_code body_ec = co_await read_body(*stream, buffer, parser, timeout, reader);

  const bool reusable =
      !reader.stopped() && !body_ec && parser.is_done() && parser.get().keep_alive() && buffer.size() == 0;
  if (body_ec)
    reader.broken(body_ec == beast::error::timeout, body_ec.message());
  else
    reader.end();
  if (reusable)
    release(key, std::move(stream));
  else
    close(*stream);
  reader.result().ended_ms = clock.now_ms();
  co_return reader.take();
}

HttpTransport::HttpTransport(HttpTransportOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}

HttpTransport::~HttpTransport() = default;

AttemptResult HttpTransport::send(const AttemptRequest& req, Clock& clock,
                                  const std::function<void(std::string_view)>& on_token) {
  std::promise<AttemptResult> promise;
  auto future = promise.get_future();
  // The caller blocks until the coroutine is done, so its references stay valid throughout.
  asio::co_spawn(impl_->ioc, impl_->attempt(req, clock, on_token),
                 [&promise](std::exception_ptr e, AttemptResult r) {
                   if (e)
                     promise.set_exception(e);
                   else
                     promise.set_value(std::move(r));
                 });
  return future.get();
}

bool HttpTransport::side_effect(const Endpoint& endpoint, const std::string& operation_id,
                                const std::string& tool) {
  try {
    auto url = net::parse_url(endpoint.base_url);
    net::HttpCall call;
    call.host = url.host;
    call.port = url.port;
    call.method = "POST";
    call.target = url.path + "/__llmchaos/side_effect";
    call.body = boost::json::serialize(boost::json::object{{"operation_id", operation_id}, {"tool", tool}});
    call.headers = {{"content-type", "application/json"}, {"idempotency-key", operation_id}};
    call.timeout_ms = impl_->options.side_effect_timeout_ms;
    return net::http_call(call).status / 100 == 2;
  } catch (const std::exception&) {
    return false;  // the executor treats it as a side effect of unknown outcome
  }
}

HttpTransportStats HttpTransport::stats() const {
  return {impl_->connects.load(), impl_->reused.load(), impl_->stale_dropped.load(),
          impl_->stale_resent.load()};
}

}  // namespace llmchaos::client
