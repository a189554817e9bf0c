// One request off a connection (request_reader.hpp).
#include "request_reader.hpp"

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/beast/http.hpp>
#include <iterator>

#include "llmchaos/core/byte_scan.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/core/sized_text.hpp"
#include "protocol_detect.hpp"

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

namespace llmchaos::mock {
namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

using byte_scan::ascii_lower;

// The request's headers the router keeps (HeadersKept) into `req`, lower-cased (the rest would cost for
// nothing).
void take_headers(const http::request<http::string_body>& msg, RawRequest& req, const HeadersKept& kept) {
  req.headers.clear();
  for (const auto& f : msg) {
    const auto raw = f.name_string();
    if (kept.every) {
      auto& [name, value] = req.headers.emplace_back(std::string(raw), std::string(f.value()));
      for (auto& c : name) c = ascii_lower(c);
      continue;
    }
    std::array<char, 32> lower;
    if (raw.size() > lower.size()) continue;  // longer than any header the router reads
    for (std::size_t i = 0; i < raw.size(); ++i) lower[i] = ascii_lower(raw[i]);
    const std::string_view name(lower.data(), raw.size());
    if (kept.keeps(name, msg.target())) req.headers.emplace_back(std::string(name), std::string(f.value()));
  }
}

ReadResult rejected(int status, std::string_view event, std::string_view target = {}) {
  ReadResult r;
  r.kind = ReadResult::Kind::rejected;
  r.status = status;
  r.event = event;
  r.target = target;
  return r;
}

ReadResult ended(std::string_view event = {}) {
  ReadResult r;
  r.kind = ReadResult::Kind::end;
  r.event = event;
  return r;
}

// What Beast's read ended with, as the answer a client gets (or the end, when it gets none).
ReadResult beast_read_failed(beast::error_code ec, std::string_view target, bool stopping) {
  if (stopping) return ended();
  if (ec == http::error::body_limit) return rejected(413, "body_too_large", target);
  // Beast stores the target once the request line is whole: none yet means the request line, i.e. the
  // URL, alone is over the limit: 414, not 431.
  if (ec == http::error::header_limit && target.empty()) return rejected(414, "uri_too_long");
  if (ec == http::error::header_limit) return rejected(431, "header_too_large");
  if (ec.category() == http::make_error_code(http::error::bad_target).category() &&
      ec != http::error::end_of_stream && ec != http::error::partial_message)
    return rejected(400, "bad_http");
  return ended(connection_event(ec, stopping));
}

}  // namespace

std::string_view connection_event(beast::error_code ec, bool stopping, bool write) {
  if (ec == net::error::operation_aborted || ec == http::error::end_of_stream || ec == net::error::eof ||
      ec == net::error::connection_reset || ec == net::error::broken_pipe || stopping)
    return {};
  if (ec == beast::error::timeout) return "idle_timeout";
  return write ? "write_error" : "read_error";
}

RequestReader::RequestReader(beast::tcp_stream& stream, ReaderOptions options, const bool& stopping)
    : stream_(stream), options_(options), stopping_(stopping), deadline_(stream.socket()) {}

std::string_view RequestReader::received() const {
  const auto data = buffer_.data();
  return {static_cast<const char*>(data.data()), data.size()};
}

void RequestReader::arm() {
  stream_.expires_after(ms_duration(options_.idle_ms));
}

FastHead RequestReader::parse_fast(RawRequest& req, ReadResult& got) {
  const auto read = read_fast_head(received(), options_.limits, req);
  verdict_ = read.verdict;
  if (read.verdict == FastHead::ready) {
    got.kind = ReadResult::Kind::request;
    got.keep_alive = read.keep_alive;
    buffer_.consume(read.consumed);
  }
  return read.verdict;
}

ReadResult RequestReader::buffered(RawRequest& req) {
  ReadResult got;
  verdict_ = FastHead::needs_beast_parser;
  if (fast()) parse_fast(req, got);
  return got;
}

ReadResult RequestReader::read_now(RawRequest& req) {
  ReadResult got;
  if (stopping_) return got;
  beast::error_code ec;
  const std::size_t n = stream_.socket().read_some(buffer_.prepare(8192), ec);
  if (!ec) {
    buffer_.commit(n);
    parse_fast(req, got);
  } else if (ec != net::error::would_block && ec != net::error::try_again) {
    if (buffer_.size() > 0)
      verdict_ = FastHead::needs_beast_parser;  // a partial request, then the end: Beast says what it was
    else
      failed_ = ec;
  }
  if (verdict_ == FastHead::need_more && !failed_)
    backoff_.missed();
  else
    backoff_.found();
  return got;
}

ReadResult RequestReader::took(RawRequest& req, beast::error_code ec, std::size_t n) {
  ReadResult got;
  if (!ec) {
    buffer_.commit(n);
    parse_fast(req, got);
  } else if (deadline_.timed_out()) {
    failed_ = beast::error::timeout;
  } else if (!stopping_ && buffer_.size() > 0) {
    verdict_ = FastHead::needs_beast_parser;  // a partial request: Beast says what it was
  } else {
    failed_ = ec;
  }
  if (!waits_for_bytes(got)) {
    deadline_.disarm();
    waiting_ = false;
  }
  return got;
}

net::awaitable<ReadResult> RequestReader::read_rest(RawRequest& req, bool first) {
  ReadResult got;
  if (failed_) {
    const auto ec = failed_;
    failed_ = {};
    co_return ended(connection_event(ec, stopping_));
  }
  if (verdict_ != FastHead::needs_beast_parser) co_return ended();  // stopping
  if (first && options_.detect_http2) {
    const auto protocol = co_await detect_protocol(stream_, buffer_, options_.idle_ms);
    if (protocol == DetectedProtocol::http2) {
      got.kind = ReadResult::Kind::http2;
      co_return got;
    }
  }
  co_return co_await read_with_beast(req);
}

// The Beast way, for whatever the fast way left alone (the bytes already buffered included): a proxy's
// request with too many headers to keep, a body still coming, Expect: 100-continue, anything over a limit.
net::awaitable<ReadResult> RequestReader::read_with_beast(RawRequest& req) {
  const auto& limits = options_.limits;
  ReadResult got;
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(limits.header_limit));
  parser.body_limit(limits.body_limit);
  arm();
  auto [ec, n] = co_await http::async_read_header(stream_, buffer_, parser, use_tuple);
  if (!ec && static_cast<std::size_t>(std::distance(parser.get().begin(), parser.get().end())) >
                 limits.max_header_count)
    co_return rejected(431, "too_many_headers");
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
    got = beast_read_failed(ec, parser.get().target(), stopping_);
    if (got.kind == ReadResult::Kind::rejected) {
      assign_reusing(rejected_target_, got.target);  // the parser's own goes with this frame
      got.target = rejected_target_;
    }
    co_return got;
  }
  auto& msg = parser.get();
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  take_headers(msg, req, options_.headers_kept);
  req.body = std::move(msg.body());
  got.kind = ReadResult::Kind::request;
  got.keep_alive = msg.keep_alive();
  co_return got;
}

}  // namespace llmchaos::mock
