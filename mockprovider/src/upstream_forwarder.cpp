// `llmchaos proxy`: a planned attempt forwarded to the route's upstream (Beast client, C++20
// coroutines, on the client session's own executor). The plan decides; this file only follows it:
//   - latency_ms: waited before forwarding;
//   - a streamed plan on an SSE answer: the real frames go through the plan's stream edit
//     (stream_edit.hpp) one by one as they arrive, paced by first_event_ms / inter_event_ms, then the
//     plan's end (complete, abort, stall then abort);
//   - a plain plan that cuts its body: the real body, announced whole, cut half way;
//   - a committed hold (post_commit_timeout): the upstream's answer is read whole and dropped, the
//     client gets nothing;
//   - everything else (the upstream's errors, plain answers, non-SSE streams): passed through as it comes.
// Credentials are passed on untouched and never written: the ledger sees a redacted target only, and
// no header is logged.
#include <chrono>
#include <map>
#include <optional>
#include <stdexcept>

#include <boost/asio/as_tuple.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/json.hpp>
#include <fmt/format.h>

#include "forward_hook.hpp"
#include "upstream_connection.hpp"
#include "llmchaos/core/byte_scan.hpp"
#include "llmchaos/mockprovider/proxy.hpp"
#include "llmchaos/mockprovider/stream_edit.hpp"

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace llmchaos::mock {
namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Hop-by-hop and framing headers: the proxy frames each side of the exchange itself.
bool hop_header(std::string_view name) {
  static constexpr std::string_view hop[] = {"connection", "keep-alive",     "transfer-encoding", "content-length",
                                             "te",         "trailer",        "upgrade",           "proxy-connection",
                                             "host",       "accept-encoding", "expect"};
  for (auto h : hop)
    if (beast::iequals(name, h)) return true;
  return false;
}

// The path below the route as the client sent it: the router saw the target with its keys masked, so
// the query comes from the original target.
std::string upstream_path(const ForwardRequest& req) {
  const auto query = req.target.find('?');
  std::string path = req.path.substr(0, req.path.find('?'));
  if (query != std::string::npos) path += req.target.substr(query);
  return path;
}

// An answer of the proxy itself when the upstream cannot be asked (no URL, connect or send failed).
std::string gateway_error(std::string_view message) {
  return boost::json::serialize(boost::json::object{
      {"error", boost::json::object{{"message", message}, {"type", "upstream_error"}, {"code", "llmchaos_proxy"}}}});
}

class UpstreamForwarder final : public Forwarder {
 public:
  explicit UpstreamForwarder(UpstreamOptions options) : options_(std::move(options)) {
    if (!options_.upstream.empty()) default_ = parse_upstream_url(options_.upstream);
    for (const auto& [route, url] : options_.routes) routes_.emplace(route, parse_upstream_url(url));
    tls_ = make_tls_context(options_.ca_file);
  }

  net::awaitable<Executed> forward(ClientWire& client, const ForwardRequest& req, const Plan& plan, bool keep_alive,
                                   Engine& engine, std::uint64_t seq) override;

 private:
  const UpstreamUrl* url_of(const std::string& route) const {
    if (auto it = routes_.find(route); it != routes_.end()) return &it->second;
    return default_ ? &*default_ : nullptr;
  }

  UpstreamOptions options_;
  std::optional<UpstreamUrl> default_;
  std::map<std::string, UpstreamUrl> routes_;
  std::shared_ptr<boost::asio::ssl::context> tls_;
};

// What one forwarded exchange has read and sent so far.
struct Exchange {
  ClientWire& client;
  const Plan& plan;
  bool keep_alive;
  Executed out{};
  Clock::time_point t0 = Clock::now();
  int upstream_status = 0;
  double head_ms = 0;
  std::optional<double> upstream_ms{};  // when reading the upstream ended (default: when the exchange did)
};

net::awaitable<Executed> answer_error(ClientWire& client, int status, std::string_view message, bool keep_alive) {
  Executed out;
  const std::string body = gateway_error(message);
  HeaderList headers;
  headers.emplace_back("content-type", "application/json");
  if (!co_await client.write_head(status, headers, false, body.size(), keep_alive) ||
      !co_await client.write_body(body)) {
    out.outcome = AttemptOutcome::client_closed;
    co_return out;
  }
  out.status = status;
  out.keep_open = keep_alive;
  co_return out;
}

// The end a plan gives its stream, once its frames are written.
net::awaitable<void> finish_stream(Exchange& x, StreamEnd end) {
  // if, not switch: GCC 12 miscompiles a co_return inside a switch of a coroutine (SIGILL).
  if (end == StreamEnd::complete) {
    if (co_await x.client.write_last_chunk())
      x.out.keep_open = x.keep_alive;
    else
      x.out.outcome = AttemptOutcome::client_closed;
  } else if (end == StreamEnd::stall_then_abort) {
    const WaitEnd w = co_await x.client.wait(x.plan.stall_ms);
    x.out.outcome = w == WaitEnd::client_closed ? AttemptOutcome::client_closed : AttemptOutcome::cut;
  } else {
    x.out.outcome = AttemptOutcome::cut;
  }
  co_return;
}

// Reads the upstream's body piece by piece as it arrives, handing each piece to `take`; false from
// `take` stops reading. Returns whether the body was read to its end.
template <class Stream, class Parser, class Take>
net::awaitable<bool> read_body(Stream& stream, beast::flat_buffer& buffer, Parser& parser, double timeout_ms, Take take) {
  std::array<char, 16 * 1024> piece;
  while (!parser.is_done()) {
    parser.get().body().data = piece.data();
    parser.get().body().size = piece.size();
    upstream_expires_after(stream, timeout_ms);
    auto [ec, n] = co_await http::async_read_some(stream, buffer, parser, use_tuple);
    if (ec == http::error::need_buffer) ec = {};
    if (ec) co_return false;
    const std::size_t got = piece.size() - parser.get().body().size;
    if (got > 0 && !co_await take(std::string_view(piece.data(), got))) co_return false;
  }
  co_return true;
}

// GCC 12 reports the release of this coroutine's frame by Asio's frame allocator (aligned_new /
// aligned_delete, a matched pair) as a mismatched free: a false -Wmismatched-new-delete, silenced here
// only, for this one function (not inlined, so the warning cannot move to its caller).
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
template <class Stream>
[[gnu::noinline]] net::awaitable<void> exchange(Exchange& x, Stream& stream, const ForwardRequest& req, const UpstreamUrl& url,
                              Dialect dialect, double read_timeout_ms) {
  // The request as the client sent it, on the upstream's path; credentials untouched.
  http::request<http::string_body> up{http::string_to_verb(req.method), url.prefix + upstream_path(req), 11};
  for (const auto& [name, value] : req.headers)
    if (!hop_header(name)) up.insert(name, value);
  up.set(http::field::host, url.host_header());
  up.set(http::field::accept_encoding, "identity");  // SSE frames are read, so never compressed
  up.keep_alive(false);
  up.body() = req.body;
  up.prepare_payload();
  upstream_expires_after(stream, read_timeout_ms);
  auto [wec, wn] = co_await http::async_write(stream, up, use_tuple);
  if (wec) {
    x.out = co_await answer_error(x.client, 502, fmt::format("upstream {}: sending the request failed: {}", url.origin(), wec.message()),
                                  x.keep_alive);
    co_return;
  }

  beast::flat_buffer buffer;
  http::response_parser<http::buffer_body> parser;
  parser.body_limit(boost::none);
  upstream_expires_after(stream, read_timeout_ms);
  auto [hec, hn] = co_await http::async_read_header(stream, buffer, parser, use_tuple);
  if (hec) {
    x.out = co_await answer_error(x.client, 502, fmt::format("upstream {}: no answer: {}", url.origin(), hec.message()),
                                  x.keep_alive);
    co_return;
  }
  x.head_ms = ms_since(x.t0);
  const auto& head = parser.get();
  x.upstream_status = head.result_int();
  HeaderList headers;
  for (const auto& f : head)
    if (!hop_header(f.name_string())) headers.emplace_back(std::string(f.name_string()), std::string(f.value()));
  const bool ok = x.upstream_status / 100 == 2;
  const bool sse = beast::iequals(head[http::field::content_type].substr(0, 17), "text/event-stream");
  const bool body_done = parser.is_done();

  // post_commit_timeout: the provider answers in full, the client hears nothing.
  if (x.plan.action == WireAction::hold) {
    if (!body_done)
      co_await read_body(stream, buffer, parser, read_timeout_ms,
                         [](std::string_view) -> net::awaitable<bool> { co_return true; });
    x.upstream_ms = ms_since(x.t0);
    x.out.status = 0;
    x.out.outcome = AttemptOutcome::held_then_closed;
    co_await x.client.wait(x.plan.hold_ms);
    co_return;
  }

  // A streamed plan on an SSE answer: the plan's edit, frame by frame.
  if (ok && sse && x.plan.streamed) {
    if (!co_await x.client.write_head(x.upstream_status, headers, true, 0, x.keep_alive)) {
      x.out.outcome = AttemptOutcome::client_closed;
      co_return;
    }
    x.out.status = x.upstream_status;
    StreamEditor editor(dialect, stream_edit(dialect, x.plan));
    SseSplitter splitter;
    bool first = true, client_gone = false, stopped = false;
    const auto write_frames = [&](const StreamEditor::Output& o) -> net::awaitable<bool> {
      for (const auto& f : o.frames) {
        const double delay = first ? x.plan.first_event_ms : x.plan.inter_event_ms;
        first = false;
        if (delay > 0 && co_await x.client.wait(delay) != WaitEnd::elapsed) {
          client_gone = true;
          co_return false;
        }
        if (!co_await x.client.write_chunk(f.bytes)) {
          client_gone = true;
          co_return false;
        }
        if (f.content) ++x.out.events;
      }
      if (o.stop) stopped = true;
      co_return !o.stop;
    };
    const bool whole = body_done || co_await read_body(stream, buffer, parser, read_timeout_ms,
                                                       [&](std::string_view bytes) -> net::awaitable<bool> {
                                                         splitter.feed(bytes);
                                                         while (auto ev = splitter.next())
                                                           if (!co_await write_frames(editor.on_frame(*ev))) co_return false;
                                                         co_return true;
                                                       });
    if (client_gone) {
      x.out.outcome = AttemptOutcome::client_closed;
      co_return;
    }
    if (!stopped) {
      if (!whole) {  // the upstream itself broke off: the client sees the same cut
        x.out.outcome = AttemptOutcome::cut;
        co_return;
      }
      const auto rest = splitter.rest();
      if (!rest.empty() && !co_await write_frames(editor.on_frame(rest))) {
        if (client_gone) x.out.outcome = AttemptOutcome::client_closed;
      }
      if (!stopped && !client_gone) co_await write_frames(editor.on_end());
      if (client_gone) {
        x.out.outcome = AttemptOutcome::client_closed;
        co_return;
      }
    }
    co_await finish_stream(x, x.plan.end);
    co_return;
  }

  // A plain plan that cuts its body: the real body, announced whole, cut half way.
  if (ok && !x.plan.streamed && x.plan.end != StreamEnd::complete) {
    std::string body;
    if (!body_done &&
        !co_await read_body(stream, buffer, parser, read_timeout_ms, [&](std::string_view b) -> net::awaitable<bool> {
          body += b;
          co_return true;
        })) {
      x.out.outcome = AttemptOutcome::cut;
      co_return;
    }
    if (!co_await x.client.write_head(x.upstream_status, headers, false, body.size(), x.keep_alive) ||
        !co_await x.client.write_body(std::string_view(body).substr(0, body.size() / 2))) {
      x.out.outcome = AttemptOutcome::client_closed;
      co_return;
    }
    x.out.status = x.upstream_status;
    co_await finish_stream(x, x.plan.end);
    co_return;
  }

  // Everything else passes through as it comes (a Content-Length body keeps its length).
  const auto length = head.payload_size();
  if (!co_await x.client.write_head(x.upstream_status, headers, !length, length.value_or(0), x.keep_alive)) {
    x.out.outcome = AttemptOutcome::client_closed;
    co_return;
  }
  x.out.status = x.upstream_status;
  bool client_gone = false;
  const bool whole = body_done || co_await read_body(stream, buffer, parser, read_timeout_ms,
                                                     [&](std::string_view b) -> net::awaitable<bool> {
                                                       const bool sent = length ? co_await x.client.write_body(b)
                                                                                : co_await x.client.write_chunk(b);
                                                       client_gone = !sent;
                                                       co_return sent;
                                                     });
  if (client_gone) {
    x.out.outcome = AttemptOutcome::client_closed;
    co_return;
  }
  if (!whole) {
    x.out.outcome = AttemptOutcome::cut;
    co_return;
  }
  if (!length) {
    co_await finish_stream(x, StreamEnd::complete);
    co_return;
  }
  x.out.keep_open = x.keep_alive;
}
#pragma GCC diagnostic pop

net::awaitable<Executed> UpstreamForwarder::forward(ClientWire& client, const ForwardRequest& req, const Plan& plan,
                                                    bool keep_alive, Engine& engine, std::uint64_t seq) {
  Executed out;
  if (plan.latency_ms > 0) {
    const auto w = co_await client.wait(plan.latency_ms);
    if (w != WaitEnd::elapsed) {
      out.outcome = w == WaitEnd::client_closed ? AttemptOutcome::client_closed : AttemptOutcome::cut;
      co_return out;
    }
  }
  const auto* url = url_of(req.route);
  if (!url) {
    engine.note_upstream(seq, 0, 0, 0);
    co_return co_await answer_error(
        client, 502, fmt::format("route \"{}\" has no upstream: give it `upstream = \"URL\"` or start the proxy with --upstream", req.route),
        keep_alive);
  }
  const Dialect dialect = engine.route_dialect(req.ns, req.route).value_or(Dialect::openai);
  Exchange x{client, plan, keep_alive};
  std::string error;
  auto connection = co_await connect_upstream(client.executor(), *url, *tls_, options_.connect_timeout_ms, error);
  if (!connection) {
    engine.note_upstream(seq, 0, ms_since(x.t0), ms_since(x.t0));
    co_return co_await answer_error(client, 502, fmt::format("upstream {}: {}", url->origin(), error), keep_alive);
  }
  if (connection->tls)
    co_await exchange(x, *connection->tls, req, *url, dialect, options_.read_timeout_ms);
  else
    co_await exchange(x, *connection->plain, req, *url, dialect, options_.read_timeout_ms);
  engine.note_upstream(seq, x.upstream_status, x.head_ms, x.upstream_ms.value_or(ms_since(x.t0)));
  co_return x.out;
}

}  // namespace

std::shared_ptr<Forwarder> make_upstream_forwarder(UpstreamOptions options) {
  return std::make_shared<UpstreamForwarder>(std::move(options));
}

}  // namespace llmchaos::mock
