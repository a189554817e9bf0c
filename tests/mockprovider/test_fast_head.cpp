// The fast path of a request head against Beast's parser: whatever the fast path reads must be what
// Beast reads from the same bytes (method, target, body, keep-alive, the values of the headers the router
// reads, where the request ends), and it may only ask for more bytes while the head is not all there.
#include <algorithm>
#include <boost/asio/buffer.hpp>
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>
#include <random>
#include <string>
#include <vector>

#include "llmchaos/core/byte_scan.hpp"
#include "llmchaos/mockprovider/fast_head.hpp"
#include "llmchaos/mockprovider/router.hpp"

using namespace llmchaos;
using namespace llmchaos::mock;
namespace http = boost::beast::http;

namespace {

struct BeastRead {
  bool done = false;
  std::size_t consumed = 0;
  RawRequest req;
  bool keep_alive = false;
};

// Beast's reading of the request at the start of `in`, under the same limits; the headers kept as the
// server keeps them (the ones the router reads, or all of them for a proxy; lower-cased, in order).
BeastRead beast_read(std::string_view in, const FastHeadLimits& limits) {
  BeastRead out;
  http::request_parser<http::string_body> parser;
  parser.header_limit(static_cast<std::uint32_t>(limits.header_limit));
  parser.body_limit(limits.body_limit);
  parser.eager(true);
  boost::beast::error_code ec;
  while (!parser.is_done() && out.consumed < in.size()) {
    const auto n = parser.put(boost::asio::buffer(in.data() + out.consumed, in.size() - out.consumed), ec);
    out.consumed += n;
    if (ec || n == 0) break;
  }
  if (!parser.is_done() || ec) return out;
  const auto& msg = parser.get();
  if (static_cast<std::size_t>(std::distance(msg.begin(), msg.end())) > limits.max_header_count) return out;
  out.done = true;
  out.req.method = std::string(msg.method_string());
  out.req.target = std::string(msg.target());
  out.req.body = msg.body();
  out.keep_alive = msg.keep_alive();
  for (const auto& f : msg) {
    std::string name(f.name_string());
    for (auto& c : name) c = byte_scan::ascii_lower(c);
    if (limits.keep_all_headers || Router::reads_header(name))
      out.req.headers.emplace_back(name, std::string(f.value()));
  }
  return out;
}

std::string show(const std::vector<std::pair<std::string, std::string>>& headers) {
  std::string out;
  for (const auto& [k, v] : headers) out += "[" + k + ": " + v + "] ";
  return out;
}

// Grouped by name, each name's values in their order: Beast keeps the fields of one name together (a
// repeated name is inserted after its last one), the fast path keeps the wire's order; what the engine
// reads (the first value of a name, any credential) is the same either way.
std::vector<std::pair<std::string, std::string>> by_name(
    std::vector<std::pair<std::string, std::string>> headers) {
  std::stable_sort(headers.begin(), headers.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  return headers;
}

const std::vector<std::string> seeds = {
    "POST /bench/v1/chat/completions HTTP/1.1\r\nHost: 127.0.0.1:8080\r\nContent-Length: 66\r\nContent-Type: "
    "application/json\r\nAuthorization: Bearer sk-bench\r\n\r\n"
    R"({"model":"gpt-bench","messages":[{"role":"user","content":"hi"}]})",
    "GET /v1/models HTTP/1.1\r\nhost: x\r\nX-Request-Id: abc\r\nconnection: close\r\n\r\n",
    "POST /ns/r/v1/messages HTTP/1.1\r\nX-API-KEY:  k \r\nIdempotency-Key: op-1\r\nContent-Length: 2\r\n"
    "Connection: keep-alive\r\nX-Stainless-Retry-Count: 1\r\n\r\n{}",
    // two requests back to back (pipelined)
    "POST /r/v1beta/models/g:generateContent?key=abc HTTP/1.1\r\nx-goog-api-key: k\r\ncontent-length: "
    "0\r\n\r\n"
    "POST /r/v1/responses HTTP/1.1\r\nrequest-id: r1\r\ncontent-length: 3\r\n\r\nabc",
    "PUT /__llmchaos/script HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nab\r\n0\r\n\r\n",
    "POST /r HTTP/1.0\r\nContent-Length: 1\r\n\r\nx",
};

// One random edit of a request: the bytes an HTTP head is made of, in the places that matter.
std::string mutate(std::string s, std::mt19937& rng) {
  static const std::string alphabet = " \t\r\n:;,/-_.?=0123456789AaZz\"\x7f\x80\xff";
  const auto pick = [&](std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng); };
  const int edits = 1 + static_cast<int>(pick(3));
  for (int e = 0; e < edits && !s.empty(); ++e) {
    const std::size_t at = pick(s.size());
    switch (pick(7)) {
      case 0:
        s[at] = alphabet[pick(alphabet.size())];
        break;
      case 1:
        s.insert(at, 1, alphabet[pick(alphabet.size())]);
        break;
      case 2:
        s.erase(at, 1 + pick(3));
        break;
      case 3:
        s.resize(at);
        break;  // cut short
      case 4:
        s[at] = static_cast<char>(s[at] ^ 0x20);
        break;   // case flip (and worse)
      case 5: {  // a line again
        const auto bol = s.rfind('\n', at);
        const auto eol = s.find('\n', at);
        if (bol != std::string::npos && eol != std::string::npos)
          s.insert(eol + 1, s.substr(bol + 1, eol - bol));
        break;
      }
      default:
        s += seeds[pick(seeds.size())];
        break;  // a pipelined request after it
    }
  }
  return s;
}

}  // namespace

TEST_CASE(
    "a request head the fast path reads is read the same by Beast, and it waits only for a head not all "
    "there",
    "[fast_head]") {
  std::mt19937 rng(20261204);
  // The server's limits, small ones, and both again for a proxy (every header kept).
  const FastHeadLimits limits =
      GENERATE(FastHeadLimits{}, FastHeadLimits{120, 4, 16},
               FastHeadLimits{16 * 1024, 100, 8 * 1024 * 1024, true}, FastHeadLimits{120, 4, 16, true});
  int ready = 0, beast = 0, need_more = 0;
  RawRequest req;  // reused, as a session reuses it
  for (int i = 0; i < 60000; ++i) {
    const std::string& seed = seeds[static_cast<std::size_t>(i) % seeds.size()];
    const std::string in = i < static_cast<int>(seeds.size()) ? seed : mutate(seed, rng);
    const auto fast = read_fast_head(in, limits, req);
    if (fast.verdict == FastHead::need_more) {
      ++need_more;
      INFO("input: " << in);
      REQUIRE(in.find("\r\n\r\n") == std::string::npos);
      continue;
    }
    if (fast.verdict == FastHead::needs_beast_parser) {
      ++beast;
      continue;
    }
    ++ready;
    const auto slow = beast_read(in, limits);
    INFO("input: " << in);
    REQUIRE(slow.done);
    REQUIRE(fast.consumed == slow.consumed);
    REQUIRE(req.method == slow.req.method);
    REQUIRE(req.target == slow.req.target);
    REQUIRE(req.body == slow.req.body);
    REQUIRE(fast.keep_alive == slow.keep_alive);
    INFO("fast: " << show(req.headers) << "\nbeast: " << show(slow.req.headers));
    REQUIRE(by_name(req.headers) == by_name(slow.req.headers));
  }
  INFO("ready " << ready << ", beast " << beast << ", need_more " << need_more);
  CHECK(ready > 6000);  // the edits leave many requests the fast path reads: the comparison is exercised
  CHECK(beast > 6000);
  CHECK(need_more > 600);
}
