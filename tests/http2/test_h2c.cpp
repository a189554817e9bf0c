// HTTP/2 with prior knowledge (h2c) on the mock's server (127.0.0.1, ephemeral port), through nghttp2's
// client API: each stream through the same router, engine and plan as HTTP/1.1; the fault kinds' HTTP/2
// form (a cut is RST_STREAM, a reset GOAWAY, a hold no HEADERS); the ledger's protocol; bad input.
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "h2_client.hpp"
#include "llmchaos/core/eventstream.hpp"
#include "llmchaos/http2/http2.hpp"
#include "server_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::test;

namespace {

mock::ServerOptions h2_options() {
  mock::ServerOptions o;
  o.http2 = http2::make_http2_server();
  return o;
}

constexpr std::uint32_t internal_error = 2, no_error = 0, protocol_error = 1, cancel = 8;
constexpr const char* converse_stream = "/r/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream";
constexpr const char* converse_body = R"({"messages":[{"role":"user","content":[{"text":"hi there"}]}]})";
const Fields sigv4 = {{"content-type", "application/json"},
                      {"authorization",
                       "AWS4-HMAC-SHA256 Credential=x/20261206/us-east-1/bedrock/aws4_request, "
                       "SignedHeaders=host, Signature=ab"},
                      {"amz-sdk-invocation-id", "inv-1"},
                      {"amz-sdk-request", "attempt=1; max=3"}};

std::vector<std::string> event_types(const std::string& body) {
  eventstream::Decoder d;
  d.feed(body);
  std::vector<std::string> out;
  while (auto m = d.next()) out.emplace_back(m->text(":event-type"));
  return out;
}

// A bedrock converse-stream over h2 on the default route, scripted with `steps`.
const H2Stream& converse_stream_call(TestServer& s, H2Client& c, const std::string& steps) {
  s.install("", route_toml(Dialect::bedrock, steps));
  const auto id = c.submit("POST", converse_stream, converse_body, sigv4);
  c.run();
  return c.stream(id);
}

std::int32_t openai_chat(H2Client& c, bool stream) {
  const auto call = chat_call(Dialect::openai, "/r", stream);
  return c.submit("POST", call.target, call.body,
                  {{"content-type", "application/json"}, {"authorization", "Bearer sk-test"}});
}

// One plain openai chat over h2 on the default route scripted with `steps`: what the stream got, and the
// attempt's ledger entry.
struct OneCall {
  H2Stream got;
  LedgerEntry entry;
};
OneCall openai_once(TestServer& s, H2Client& c, const std::string& steps) {
  s.install("", route_toml(Dialect::openai, steps));
  const auto id = openai_chat(c, false);
  c.run();
  const auto l = s.ledger("", 1);
  REQUIRE(l.size() == 1);
  return {c.stream(id), l[0]};
}

}  // namespace

TEST_CASE("h2c: a plain openai chat completion, and the ledger says h2 (http/1.1 for HTTP/1.1)", "[http2]") {
  TestServer s(h2_options());
  s.install("", route_toml(Dialect::openai, R"({ fault = "ok" }, { fault = "ok" })"));
  H2Client c(s.port());
  const auto id = openai_chat(c, false);
  c.run();
  const auto& got = c.stream(id);
  CHECK(got.status == 200);
  CHECK(got.header("content-type").find("application/json") != std::string::npos);
  CHECK(got.body.find("alpha beta gamma delta") != std::string::npos);
  CHECK_FALSE(got.reset);
  CHECK(s.chat(Dialect::openai, "/r", false).status == 200);  // HTTP/1.1 beside it
  const auto l = s.ledger("", 2);
  REQUIRE(l.size() == 2);
  CHECK(l[0].protocol == WireProtocol::h2);
  CHECK(l[0].outcome == AttemptOutcome::completed);
  CHECK(l[0].status == 200);
  CHECK(l[1].protocol == WireProtocol::http1);
  // The admin API over h2 too, and the ledger JSON's field.
  const auto admin = c.submit("GET", "/__llmchaos/ledger");
  c.run();
  CHECK(c.stream(admin).status == 200);
  CHECK(c.stream(admin).body.find(R"("protocol":"h2")") != std::string::npos);
  CHECK(c.stream(admin).body.find(R"("protocol":"http/1.1")") != std::string::npos);
}

TEST_CASE("h2c: a bedrock converse-stream's DATA is the eventstream, its SDK headers in the ledger",
          "[http2]") {
  TestServer s(h2_options());
  H2Client c(s.port());
  const auto& got = converse_stream_call(s, c, R"({ fault = "ok" })");
  CHECK(got.status == 200);
  CHECK(got.header("content-type") == "application/vnd.amazon.eventstream");
  const auto types = event_types(got.body);
  REQUIRE(types.size() >= 4);
  CHECK(types.front() == "messageStart");
  CHECK(types.back() == "metadata");
  const auto l = s.ledger("", 1);
  REQUIRE(l.size() == 1);
  CHECK(l[0].protocol == WireProtocol::h2);
  CHECK(l[0].stream);
  CHECK(l[0].amz_sdk_invocation_id == "inv-1");
  CHECK(l[0].amz_sdk_request == "attempt=1; max=3");
  CHECK(l[0].events_sent > 0);
}

TEST_CASE("h2c: a stream_cut is RST_STREAM (INTERNAL_ERROR) after the frames the plan sends", "[http2]") {
  TestServer s(h2_options());
  H2Client c(s.port());
  const auto& got = converse_stream_call(s, c, R"({ fault = "stream_cut", cut_after_events = 2 })");
  CHECK(got.status == 200);
  REQUIRE(got.reset);
  CHECK(*got.reset == internal_error);
  CHECK(event_types(got.body).size() >= 2);
  CHECK_FALSE(c.goaway);  // the connection stays
  const auto l = s.ledger("", 1);
  REQUIRE(l.size() == 1);
  CHECK(l[0].outcome == AttemptOutcome::cut);
  CHECK(l[0].events_sent == 2);
}

TEST_CASE("h2c: a connection reset is GOAWAY, then the close", "[http2]") {
  TestServer s(h2_options());
  H2Client c(s.port());
  const auto one = openai_once(s, c, R"({ fault = "connect_reset" })");
  REQUIRE(c.goaway);
  CHECK(*c.goaway == internal_error);
  CHECK(one.got.status == 0);
  CHECK(one.entry.outcome == AttemptOutcome::reset);
  CHECK(one.entry.protocol == WireProtocol::h2);
}

TEST_CASE("h2c: a hold is a stream that gets no HEADERS, reset (CANCEL) when the hold ends", "[http2]") {
  TestServer s(h2_options());
  H2Client c(s.port());
  const auto one = openai_once(s, c, R"({ fault = "no_response", hold_ms = 150 })");
  CHECK(one.got.status == 0);
  REQUIRE(one.got.reset);
  CHECK(*one.got.reset == cancel);
  CHECK(one.entry.outcome == AttemptOutcome::held_then_closed);
}

TEST_CASE("h2c: two concurrent streams on one connection, a paced one and a plain one", "[http2]") {
  TestServer s(h2_options());
  s.install("", route_toml(Dialect::openai, R"({ fault = "ok", inter_event_ms = 30 }, { fault = "ok" })"));
  H2Client c(s.port());
  const auto slow = openai_chat(c, true);
  const auto plain = openai_chat(c, false);
  c.run();
  CHECK(c.stream(slow).status == 200);
  CHECK(c.stream(slow).body.find("data: [DONE]") != std::string::npos);
  CHECK(c.stream(plain).status == 200);
  CHECK(c.stream(plain).body.find("alpha") != std::string::npos);
  const auto l = s.ledger("", 2);
  REQUIRE(l.size() == 2);
  for (const auto& e : l) {
    CHECK(e.protocol == WireProtocol::h2);
    CHECK(e.outcome == AttemptOutcome::completed);
  }
  // Multiplexed: the plain answer did not wait behind the paced stream that arrived first.
  CHECK(l[0].stream);
  CHECK(l[1].finished_at_ms < l[0].finished_at_ms);
}

TEST_CASE("h2c: bad input gets a clean protocol error or the dialect's answer, and the server goes on",
          "[http2]") {
  mock::ServerOptions o = h2_options();
  o.body_limit = 1024;
  TestServer s(o);
  s.install("", route_toml(Dialect::openai, R"({ fault = "ok" })"));
  SECTION(
      "garbage after the preface: GOAWAY with an error code (nghttp2's: FRAME_SIZE_ERROR here) or a close") {
    H2Client c(s.port());
    c.send_raw(std::string(64, '\x7f'));
    openai_chat(c, false);
    c.run(2000);
    CHECK((c.goaway || c.server_closed));
    if (c.goaway) CHECK(*c.goaway != no_error);
  }
  SECTION("a stream without :path is reset (PROTOCOL_ERROR)") {
    H2Client c(s.port());
    const auto id = c.submit("GET", "");
    c.run(2000);
    REQUIRE(c.stream(id).reset);
    CHECK(*c.stream(id).reset == protocol_error);
  }
  SECTION("DATA over the body limit: the dialect's 413") {
    H2Client c(s.port());
    const auto call = chat_call(Dialect::openai, "/r", false, R"("pad":")" + std::string(4096, 'x') + "\"");
    const auto id = c.submit("POST", call.target, call.body);
    c.run(2000);
    CHECK(c.stream(id).status == 413);
  }
  SECTION("a header block over the limit: 431") {
    H2Client c(s.port());
    Fields many;
    for (int i = 0; i < 150; ++i) many.emplace_back("x-h" + std::to_string(i), "v");
    const auto call = chat_call(Dialect::openai, "/r", false);
    const auto id = c.submit("POST", call.target, call.body, many);
    c.run(2000);
    CHECK(c.stream(id).status == 431);
  }
  SECTION("a header field past the header limit's bytes: 431") {
    H2Client c(s.port());
    const auto call = chat_call(Dialect::openai, "/r", false);
    const auto id = c.submit("POST", call.target, call.body, {{"x-big", std::string(20000, 'v')}});
    c.run(2000);
    CHECK(c.stream(id).status == 431);
  }
  // The server still serves, over both protocols.
  H2Client after(s.port());
  const auto id = openai_chat(after, false);
  after.run();
  CHECK(after.stream(id).status == 200);
  CHECK(s.chat(Dialect::openai, "/r", false).status == 200);
}

TEST_CASE("h2c: an idle connection gets GOAWAY (NO_ERROR) and is closed after --idle-timeout-ms", "[http2]") {
  mock::ServerOptions o = h2_options();
  o.idle_timeout_ms = 150;
  TestServer s(o);
  H2Client c(s.port());
  const auto start = std::chrono::steady_clock::now();
  c.run(3000);  // no stream: runs until the server ends the connection
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(2000));
  REQUIRE(c.goaway);
  CHECK(*c.goaway == no_error);
}

TEST_CASE("h2c: --max-connections counts HTTP/2 connections", "[http2]") {
  mock::ServerOptions o = h2_options();
  o.max_connections = 1;
  TestServer s(o);
  H2Client first(s.port());
  REQUIRE(openai_once(s, first, R"({ fault = "ok" })").got.status == 200);  // the connection stays open
  const auto second = s.send("POST", "/r/v1/chat/completions", "{}");
  CHECK(second.status == 503);
}

TEST_CASE("h2c: stop() ends a held stream at once and finishes its ledger entry", "[http2]") {
  TestServer s(h2_options());
  s.install("", route_toml(Dialect::openai, R"({ fault = "no_response", hold_ms = 30000 })"));
  H2Client c(s.port());
  openai_chat(c, false);
  c.run(200);  // the stream is held
  const auto start = std::chrono::steady_clock::now();
  s.server.stop();
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::milliseconds(1500));
  const auto l = s.engine().ledger("");
  REQUIRE(l.size() == 1);
  CHECK(l[0].finished);
  CHECK(l[0].outcome == AttemptOutcome::held_then_closed);
}

TEST_CASE("h2c: with two I/O threads (a strand per connection) streams still multiplex", "[http2]") {
  mock::ServerOptions o = h2_options();
  o.threads = 2;
  TestServer s(o);
  s.install("", route_toml(Dialect::openai, R"({ fault = "ok" })"));
  H2Client c(s.port());
  std::vector<std::int32_t> ids;
  for (int i = 0; i < 8; ++i) ids.push_back(openai_chat(c, i % 2 == 0));
  c.run();
  for (const auto id : ids) CHECK(c.stream(id).status == 200);
  CHECK(s.ledger("", 8).size() == 8);
}

TEST_CASE("h2c: answers larger than the flow-control windows (64 KB) arrive whole, plain and streamed",
          "[http2]") {
  TestServer s(h2_options());
  std::string text;
  for (int i = 0; i < 30000; ++i) text += "word" + std::to_string(i % 10) + " ";
  s.install("", route_toml(Dialect::openai, R"({ fault = "ok", text = ")" + text +
                                                R"(" }, { fault = "ok", text = ")" + text + R"(" })"));
  H2Client c(s.port());
  const auto plain = openai_chat(c, false);
  const auto streamed = openai_chat(c, true);
  c.run(30000);  // returns when both streams end: the bound is for a hang (TSan's build takes 9 to 11 s)
  CHECK(c.stream(plain).status == 200);
  CHECK(c.stream(plain).body.size() > 150000);
  CHECK(c.stream(plain).body.find("word9 word0") != std::string::npos);
  CHECK_FALSE(c.stream(plain).reset);
  CHECK(c.stream(streamed).body.find("data: [DONE]") != std::string::npos);
  const auto l = s.ledger("", 2);
  REQUIRE(l.size() == 2);
  CHECK(l[0].outcome == AttemptOutcome::completed);
  CHECK(l[1].events_sent == 30000);
}

TEST_CASE("h2c: a step's scripted latency comes before the stream's HEADERS", "[http2]") {
  TestServer s(h2_options());
  H2Client c(s.port());
  const auto one = openai_once(s, c, R"({ fault = "ok", latency_ms = 120 })");
  CHECK(one.got.status == 200);
  CHECK(one.entry.planned_latency_ms == Approx(120));
  CHECK(one.entry.finished_at_ms - one.entry.received_at_ms >= 120);  // a lower bound: never early
}
