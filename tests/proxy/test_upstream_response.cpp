// The proxy's fast reader of an upstream's answer (proxy/src/upstream_response.hpp) against the plain way,
// Beast's response parser: on generated answers split at every boundary, the same status, fields and body;
// whatever it leaves to Beast is an answer it does not read fully; hostile bytes never crash it.
#include <boost/beast/http.hpp>
#include <catch2/catch.hpp>
#include <random>
#include <string>

#include "upstream_response.hpp"

namespace http = boost::beast::http;
using namespace llmchaos::proxy;

namespace {

struct Read {
  bool ok = false;
  int status = 0;
  std::vector<std::pair<std::string, std::string>> fields;
  std::string body;
};

// Beast's reading of a whole answer: the fields of its head (a chunked body's trailers come after the
// head is delivered, and are not forwarded), then the body.
Read by_beast(const std::string& bytes) {
  http::response_parser<http::string_body> p;
  boost::system::error_code ec;
  const auto head = p.put(boost::asio::buffer(bytes), ec);  // not eager: the head alone
  Read r;
  if (ec || !p.is_header_done()) return r;
  for (const auto& f : p.get()) r.fields.emplace_back(f.name_string(), f.value());
  p.eager(true);
  p.put(boost::asio::buffer(bytes.data() + head, bytes.size() - head), ec);
  if (ec || !p.is_done()) return r;
  r.ok = true;
  r.status = p.get().result_int();
  r.body = p.get().body();
  return r;
}

// The fast reader's, the bytes fed `step` at a time as a socket would give them; nullopt: left to Beast.
std::optional<Read> by_fast(const std::string& bytes, std::size_t step) {
  std::string in;
  std::size_t fed = 0;
  UpstreamHead head;
  HeadVerdict v = HeadVerdict::need_more;
  while (v == HeadVerdict::need_more && fed < bytes.size()) {
    in += bytes.substr(fed, step);
    fed += step;
    v = read_upstream_head(in, head);
  }
  if (v != HeadVerdict::ready) return std::nullopt;
  Read r;
  r.status = head.status;
  for (const auto& [n, val] : head.fields) r.fields.emplace_back(n, val);
  std::string held = in.substr(head.head_bytes);
  ChunkedBody chunks;
  std::uint64_t left = head.content_length.value_or(0);
  for (;;) {
    if (head.content_length) {
      const auto n = std::min<std::uint64_t>(left, held.size());
      r.body += held.substr(0, n);
      held.erase(0, n);
      left -= n;
      if (left == 0) break;
    } else {
      auto s = chunks.next(held);
      if (chunks.failed()) return Read{};
      r.body += s.data;
      held.erase(0, s.consumed);
      if (chunks.done()) break;
      if (s.consumed > 0) continue;
    }
    if (fed >= bytes.size()) return Read{};  // ended before the body did
    held += bytes.substr(fed, step);
    fed += step;
  }
  r.ok = true;
  return r;
}

std::string chunked(const std::string& body, std::mt19937& rng, bool extensions, bool trailers) {
  std::string out;
  for (std::size_t i = 0; i < body.size();) {
    const std::size_t n = std::min<std::size_t>(body.size() - i, 1 + rng() % 40);
    char size[32];
    std::snprintf(size, sizeof size, rng() % 2 ? "%zx" : "%zX", n);
    out += size;
    if (extensions && rng() % 3 == 0) out += ";name=value";
    out += "\r\n" + body.substr(i, n) + "\r\n";
    i += n;
  }
  out += "0\r\n";
  if (trailers) out += "x-trailer: t\r\n";
  return out + "\r\n";
}

}  // namespace

TEST_CASE("the fast reader reads generated answers as Beast does, at every read boundary", "[proxy][fast]") {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    std::string body(rng() % 300, 'x');
    for (auto& c : body) c = static_cast<char>('a' + rng() % 26);
    if (rng() % 4 == 0) body += "\r\n\r\n0\r\n";  // framing-like bytes inside the body
    const bool is_chunked = rng() % 2;
    const int statuses[] = {200, 201, 400, 429, 500, 503, 529};
    std::string answer = "HTTP/1.1 " + std::to_string(statuses[rng() % 7]) +
                         (rng() % 5 ? " Reason Here" : " ") +
                         "\r\nContent-Type: text/event-stream\r\nx-request-id:  req_" +
                         std::to_string(trial) + "  \r\nServer: upstream\r\n";
    if (rng() % 3 == 0) answer += "Connection: keep-alive\r\n";
    answer += is_chunked
                  ? "Transfer-Encoding: chunked\r\n\r\n" + chunked(body, rng, trial % 2, trial % 3 == 0)
                  : "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
    const auto beast = by_beast(answer);
    REQUIRE(beast.ok);
    for (const std::size_t step : {std::size_t{1}, std::size_t{3}, std::size_t{17}, answer.size()}) {
      CAPTURE(trial, step, answer);
      const auto fast = by_fast(answer, step);
      REQUIRE(fast);  // every answer generated here is a plain one
      CHECK(fast->ok);
      CHECK(fast->status == beast.status);
      CHECK(fast->fields == beast.fields);
      CHECK(fast->body == beast.body);
      CHECK(fast->body == body);
    }
  }
}

TEST_CASE("answers the fast reader does not fully understand are left to Beast", "[proxy][fast]") {
  const std::string left_to_beast[] = {
      "HTTP/1.0 200 OK\r\nContent-Length: 2\r\n\r\nhi",                              // HTTP/1.0
      "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the close",          // no framing
      "HTTP/1.1 204 No Content\r\n\r\n",                                             // no body
      "HTTP/1.1 100 Continue\r\n\r\n",                                               // interim
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nhi",         // two lengths
      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n",  // both framings
      "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",                 // another coding
      "HTTP/1.1 200 OK\r\nConnection: upgrade\r\nContent-Length: 0\r\n\r\n",  // Connection's other tokens
      "HTTP/1.1 200 OK\r\nX-Folded: a\r\n b\r\nContent-Length: 0\r\n\r\n",    // obs-fold
      "HTTP/1.1 200 OK\r\nX-Bin: \x01\r\nContent-Length: 0\r\n\r\n",          // a control byte
      "HTTP/1.1 2x0 OK\r\nContent-Length: 0\r\n\r\n",                         // a bad status
  };
  for (const auto& answer : left_to_beast) {
    CAPTURE(answer);
    UpstreamHead head;
    CHECK(read_upstream_head(answer, head) == HeadVerdict::beast);
  }
  UpstreamHead head;
  CHECK(read_upstream_head("HTTP/1.1 200 OK\r\nContent-Len", head) == HeadVerdict::need_more);
  CHECK(read_upstream_head(std::string(upstream_head_limit + 1, 'x'), head) == HeadVerdict::beast);
  CHECK(read_upstream_head("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n", head) ==
        HeadVerdict::ready);
  CHECK_FALSE(head.keep_alive);
}

TEST_CASE("a broken chunked body fails, and hostile bytes never crash the reader", "[proxy][fast]") {
  const std::string broken[] = {"zz\r\n",  "5\r\nhelloXX",           "\r\n",
                                "5 x\r\n", "ffffffffffffffffff\r\n", std::string(2000, '1')};
  for (const auto& b : broken) {
    CAPTURE(b);
    ChunkedBody c;
    std::string_view in = b;
    for (int i = 0; i < 10 && !c.failed(); ++i) in.remove_prefix(c.next(in).consumed);
    CHECK(c.failed());
  }
  std::mt19937 rng(5);
  for (int trial = 0; trial < 3000; ++trial) {
    std::string junk = "HTTP/1.1 200 OK\r\n";
    const auto n = rng() % 200;
    for (std::size_t i = 0; i < n; ++i) junk += static_cast<char>(rng() % 4 ? "\r\n:0a ;"[rng() % 7] : rng());
    UpstreamHead head;
    const auto v = read_upstream_head(junk, head);
    if (v == HeadVerdict::ready) CHECK(head.head_bytes <= junk.size());
    ChunkedBody c;
    std::string_view in = junk;
    for (int i = 0; i < 400 && !c.failed() && !c.done() && !in.empty(); ++i) {
      const auto s = c.next(in);
      if (s.consumed == 0) break;
      in.remove_prefix(s.consumed);
    }
  }
}
