// The mock provider's request path without a socket: raw bytes (HTTP head and body) -> Beast's
// request_parser configured as the server's session configures it -> Router::handle (route, engine
// decision, dialect body, ledger) or Router::reject for what the session cannot read whole.
// The script serves all four dialects and cycles through fault kinds, so every input reaches a
// dialect's request decoder and a fault's plan builder.
#include <boost/beast/core/buffers_range.hpp>
#include <boost/beast/http.hpp>
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string>

#include "llmchaos/core/clock.hpp"
#include "llmchaos/mockprovider/router.hpp"
#include "llmchaos/mockprovider/script.hpp"
#include "llmchaos/mockprovider/server.hpp"

namespace net = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using namespace llmchaos;

namespace {

constexpr const char* script_text = R"(
[route.oa]
dialect = "openai"
script = [{ fault = "ok" }, { fault = "rate_429", retry_after_ms = 5 }, { fault = "stream_cut", cut_after_events = 1 },
          { fault = "malformed_event" }, { fault = "post_commit_timeout", hold_ms = 10 }, { fault = "policy" },
          { fault = "schema_missing", missing_field = "choices" }, { fault = "prefill_rejected" }]
then = "ok"

[route.an]
dialect = "anthropic"
script = [{ fault = "ok" }, { fault = "overloaded" }, { fault = "stream_error", cut_after_events = 2 },
          { fault = "no_terminator" }, { fault = "connect_reset" }, { fault = "slow", p50_ms = 5, p95_ms = 20 },
          { fault = "stream_stall", stall_ms = 5 }, { fault = "server_500_context" }]
then = "ok"

[route.ge]
dialect = "gemini"
script = [{ fault = "ok" }, { fault = "quota_429" }, { fault = "payment_402" }, { fault = "auth" },
          { fault = "no_response", hold_ms = 10 }, { fault = "slow_first_token", first_token_ms = 5 },
          { fault = "bad_request" }, { fault = "server_500" }]
then = "ok"

[route.rs]
dialect = "responses"
script = [{ fault = "ok" }, { fault = "stream_error", cut_after_events = 1 }, { fault = "policy", cut_after_events = 1 },
          { fault = "malformed_event" }, { fault = "no_terminator" }, { fault = "rate_429", retry_after_ms = 5 }]
then = "ok"

[route.az]
dialect = "azure"
script = [{ fault = "ok" }, { fault = "policy" }, { fault = "policy", cut_after_events = 1 }, { fault = "rate_429", retry_after_ms = 5 },
          { fault = "auth" }, { fault = "quota_429" }, { fault = "stream_cut", cut_after_events = 1 }]
then = "ok"
)";

const mock::Script& script() {
  static const mock::Script s = mock::parse_script_text(script_text, "fuzz script");
  return s;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const mock::ServerOptions defaults;  // the limits `llmchaos serve` starts with
  ManualClock clock;
  mock::Engine engine(clock);
  engine.install("", script());
  mock::Router router(engine, {size % 2 ? "token" : ""});  // with and without an admin token

  // As Session::run configures its parser; the whole input is what the client sent before closing.
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(defaults.header_limit));
  parser.body_limit(defaults.body_limit);
  parser.eager(true);
  beast::error_code ec;
  net::const_buffer in(data, size);
  while (!ec && in.size() > 0 && !parser.is_done()) {
    const auto n = parser.put(in, ec);
    in += n;
    if (n == 0 && !ec) break;  // no progress: treat the rest as never sent
    if (ec == http::error::need_more) break;
  }
  // Nothing parsed at all: Beast's read reports end_of_stream and the session closes without a reply
  // (put_eof asserts got_some(); the first fuzz run crashed here on the empty input).
  if (!parser.got_some()) return 0;
  if (ec == http::error::need_more || (!ec && !parser.is_done())) {
    ec = {};
    parser.put_eof(ec);  // the client closed here
  }
  if (ec) {
    // As the session answers a request it could not read whole.
    if (ec == http::error::body_limit)
      (void)router.reject(parser.get().target(), 413);
    else if (ec == http::error::header_limit)
      (void)router.reject({}, 431);
    else
      (void)router.reject({}, 400);
    return 0;
  }
  const auto& msg = parser.get();
  if (static_cast<std::size_t>(std::distance(msg.begin(), msg.end())) > defaults.max_header_count) {
    (void)router.reject({}, 431);
    return 0;
  }
  mock::RawRequest req;
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  for (const auto& f : msg) {
    std::string name(f.name_string());
    for (auto& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    req.headers.emplace_back(std::move(name), std::string(f.value()));
  }
  req.body = msg.body();
  // Twice: the second request sees the ledger and script position the first one left.
  for (int i = 0; i < 2; ++i) {
    auto routed = router.handle(req);
    if (routed.seq) engine.finish(*routed.seq, AttemptOutcome::completed, 0, routed.plan.status);
  }
  (void)engine.metrics_text();
  return 0;
}
