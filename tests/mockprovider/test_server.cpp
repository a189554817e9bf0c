// Loopback integration: every fault kind on every dialect, through real sockets, checked on the wire
// (status, headers, body shape, events before a cut, RST, holds) and in the ledger.
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "llmchaos/net/http_call.hpp"
#include "server_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::test;
namespace json = boost::json;

namespace {
const std::string text = "alpha beta gamma delta";

std::vector<SseEvent> content_events(Dialect d, const WireReply& r) {
  std::vector<SseEvent> out;
  for (const auto& e : sse_events(r.body))
    if (!event_text(d, e).empty()) out.push_back(e);
  return out;
}

std::string streamed_text(Dialect d, const WireReply& r) {
  std::string s;
  for (const auto& e : sse_events(r.body)) s += event_text(d, e);
  return s;
}

std::string plain_text(Dialect d, const json::value& v) {
  switch (d) {
    case Dialect::openai:
    case Dialect::azure:
      return std::string(v.at("choices").at(0).at("message").at("content").as_string());
    case Dialect::anthropic:
      return std::string(v.at("content").at(0).at("text").as_string());
    case Dialect::responses:
      return std::string(v.at("output").at(0).at("content").at(0).at("text").as_string());
    case Dialect::gemini:
      return std::string(v.at("candidates").at(0).at("content").at("parts").at(0).at("text").as_string());
    case Dialect::bedrock:
      return std::string(v.at("output").at("message").at("content").at(0).at("text").as_string());
  }
  return {};
}

void check_error_body(Dialect d, const WireReply& r) {
  CHECK(r.header("content-type") == "application/json");
  CHECK_FALSE(r.header(request_id_header(d)).empty());
  const auto v = r.json();
  switch (d) {
    case Dialect::openai:
    case Dialect::responses:
      CHECK(v.at("error").at("message").is_string());
      CHECK(v.at("error").at("type").is_string());
      CHECK(v.at("error").as_object().contains("param"));
      CHECK(v.at("error").as_object().contains("code"));
      break;
    case Dialect::azure:  // Azure's own bodies carry code and message; the model backend's are OpenAI's
      CHECK(v.at("error").at("message").is_string());
      CHECK(v.at("error").as_object().contains("code"));
      break;
    case Dialect::anthropic:
      CHECK(v.at("type") == "error");
      CHECK(v.at("error").at("type").is_string());
      CHECK(v.at("error").at("message").is_string());
      CHECK(v.at("request_id").as_string() == r.header("request-id"));
      break;
    case Dialect::gemini:
      CHECK(v.at("error").at("code").as_int64() == r.status);
      CHECK(v.at("error").at("status").is_string());
      break;
    case Dialect::bedrock:
      CHECK(v.at("message").is_string());
      CHECK_FALSE(r.header("x-amzn-errortype").empty());
      break;
  }
}

// The last frame of a complete stream is the dialect's end sentinel.
bool ends_with_terminator(Dialect d, const WireReply& r) {
  const auto events = sse_events(r.body);
  if (events.empty()) return false;
  const auto& last = events.back();
  switch (d) {
    case Dialect::openai:
    case Dialect::azure:
      return last.data == "[DONE]";
    case Dialect::anthropic:
      return last.event == "message_stop";
    case Dialect::gemini:
      return last.data.find("\"finishReason\"") != std::string::npos;
    case Dialect::responses:
      return last.event == "response.completed";
    case Dialect::bedrock:  // binary frames: test_bedrock.cpp reads them
      return false;
  }
  return false;
}
}  // namespace

TEST_CASE("ok answers plain on every dialect with the canonical text and a full ledger entry", "[server]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  TestServer s;
  s.install("", route_toml(d, R"({ fault = "ok" })"));
  const auto r = s.chat(d, "/r", false, {}, {{"idempotency-key", "op-9"}, {"x-stainless-retry-count", "0"}});
  REQUIRE(r.status == 200);
  CHECK(r.complete);
  CHECK(r.header("content-type") == "application/json");
  CHECK_FALSE(r.header(request_id_header(d)).empty());
  CHECK(plain_text(d, r.json()) == text);
  const auto l = s.ledger("", 1);
  REQUIRE(l.size() == 1);
  CHECK(l[0].route == "r");
  CHECK(l[0].dialect == d);
  CHECK(l[0].attempt == 0);
  CHECK_FALSE(l[0].stream);
  CHECK(l[0].fault == FaultKind::ok);
  CHECK(l[0].status == 200);
  CHECK(l[0].outcome == AttemptOutcome::completed);
  CHECK(l[0].committed);
  CHECK(l[0].idempotency_key == "op-9");
  CHECK(l[0].stainless_retry_count == "0");
  CHECK(l[0].request_id == r.header(request_id_header(d)));
  CHECK(l[0].path == chat_call(d, "", false).target);
}

TEST_CASE("ok streams one event per word on every dialect, framed as each SDK needs", "[server]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  TestServer s;
  s.install("", route_toml(d, R"({ fault = "ok", inter_event_ms = 1 })"));
  const auto r = s.chat(d, "/r", true);
  REQUIRE(r.status == 200);
  CHECK(r.chunked);
  CHECK(r.complete);
  CHECK(r.header("content-type") == "text/event-stream");
  CHECK(content_events(d, r).size() == 4);
  CHECK(streamed_text(d, r) == text);
  CHECK(ends_with_terminator(d, r));
  const auto events = sse_events(r.body);
  std::string rejoined;
  for (const auto& e : events) rejoined += e.raw;
  CHECK(rejoined == r.body);  // nothing outside a terminated frame
  if (d == Dialect::anthropic)
    for (const auto& e : events) CHECK_FALSE(e.event.empty());
  if (d == Dialect::gemini)
    for (const auto& e : events) CHECK(e.raw.substr(e.raw.size() - 4) == "\r\n\r\n");
  if (d == Dialect::openai) {
    CHECK(json::parse(events.front().data).at("choices").at(0).at("delta").at("role") == "assistant");
    CHECK(json::parse(events[events.size() - 2].data).at("usage").at("completion_tokens") == 4);
  }
  const auto l = s.ledger("", 1);
  REQUIRE(l.size() == 1);
  CHECK(l[0].stream);
  CHECK(l[0].events_sent == 4);
  CHECK(l[0].committed);
  CHECK(l[0].outcome == AttemptOutcome::completed);
}

TEST_CASE("each SSE event is one chunk of the chunked body", "[server]") {
  TestServer s;
  s.install("", route_toml(Dialect::anthropic, R"({ fault = "ok" })"));
  const auto r = s.chat(Dialect::anthropic, "/r", true);
  // Walk the raw chunks: each one must hold exactly one whole event.
  const auto body_start = r.raw.find("\r\n\r\n") + 4;
  std::size_t pos = body_start, chunks = 0;
  for (int guard = 0; guard < 100; ++guard) {
    const auto crlf = r.raw.find("\r\n", pos);
    REQUIRE(crlf != std::string::npos);
    const auto size = std::stoul(r.raw.substr(pos, crlf - pos), nullptr, 16);
    if (size == 0) break;
    const auto chunk = r.raw.substr(crlf + 2, size);
    CHECK(sse_events(chunk).size() == 1);
    CHECK(sse_events(chunk).at(0).raw == chunk);
    pos = crlf + 2 + size + 2;
    ++chunks;
  }
  CHECK(chunks == sse_events(r.body).size());
}

TEST_CASE("error faults answer every dialect's status and body, plain and to a stream request", "[server]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  const auto stream = GENERATE(false, true);
  struct Row {
    const char* fault;
    int openai, anthropic, gemini;
  };
  const Row rows[] = {{"rate_429", 429, 429, 429},    {"quota_429", 429, 429, 429},
                      {"payment_402", 402, 402, 402}, {"overloaded", 503, 529, 503},
                      {"server_500", 500, 500, 500},  {"server_500_context", 500, 500, 500},
                      {"bad_request", 400, 400, 400}, {"auth", 401, 401, 401}};
  TestServer s;
  std::string steps;
  for (const auto& row : rows) steps += std::string("{ fault = \"") + row.fault + "\" },";
  s.install("", route_toml(d, steps));
  for (const auto& row : rows) {
    INFO(row.fault << " on " << to_string(d) << (stream ? " (stream)" : ""));
    const auto r = s.chat(d, "/r", stream, {}, {{"x-request-id", "req_client"}});
    CHECK(r.status == (d == Dialect::openai      ? row.openai
                       : d == Dialect::anthropic ? row.anthropic
                                                 : row.gemini));
    CHECK(r.complete);
    CHECK_FALSE(r.chunked);
    check_error_body(d, r);
    CHECK(r.header(request_id_header(d)) == "req_client");  // echoed
    CHECK(r.has_header("retry-after") == (std::string(row.fault) == "rate_429"));
    CHECK(r.has_header("retry-after-ms") == (std::string(row.fault) == "rate_429"));
  }
  const auto l = s.ledger("", std::size(rows));
  REQUIRE(l.size() == std::size(rows));
  for (std::size_t i = 0; i < l.size(); ++i) {
    CHECK(to_string(l[i].fault) == rows[i].fault);
    CHECK(l[i].attempt == static_cast<int>(i));
    CHECK(l[i].outcome == AttemptOutcome::completed);
    CHECK_FALSE(l[i].committed);
    CHECK(l[i].request_id == "req_client");
  }
}

TEST_CASE(
    "a plain answer's head is the status line, Server, the plan's headers in order, Connection, "
    "Content-Length",
    "[server]") {
  TestServer s;
  s.install("", route_toml(Dialect::openai, R"({ fault = "ok" })"));
  const auto r = s.chat(Dialect::openai, "/r", false, {}, {{"x-request-id", "req_client"}});
  const auto head_end = r.raw.find("\r\n\r\n");
  REQUIRE(head_end != std::string::npos);
  const auto body_size = r.raw.size() - head_end - 4;
  CHECK(body_size == r.body.size());
  CHECK(
      r.raw.substr(0, head_end + 4) ==
      "HTTP/1.1 200 OK\r\nServer: llmchaos\r\ncontent-type: application/json\r\nx-request-id: req_client\r\n"
      "Connection: close\r\nContent-Length: " +
          std::to_string(body_size) + "\r\n\r\n");
}

TEST_CASE("Anthropic's 529 goes out with a reason phrase", "[server]") {
  TestServer s;
  s.install("", route_toml(Dialect::anthropic, R"({ fault = "overloaded" })"));
  const auto r = s.chat(Dialect::anthropic, "/r", false);
  CHECK(r.raw.rfind("HTTP/1.1 529 Overloaded\r\n", 0) == 0);
  CHECK(r.json().at("error").at("type") == "overloaded_error");
}

TEST_CASE("rate_429 sends the scripted retry-after and retry-after-ms", "[server]") {
  TestServer s;
  s.install("", route_toml(Dialect::openai, R"({ fault = "rate_429", retry_after_ms = 2500 })"));
  const auto r = s.chat(Dialect::openai, "/r", false);
  CHECK(r.status == 429);
  CHECK(r.header("retry-after") == "3");
  CHECK(r.header("retry-after-ms") == "2500");
  CHECK(r.json().at("error").at("code") == "rate_limit_exceeded");
}

TEST_CASE("time_scale scales retry-after headers and delays", "[server]") {
  mock::ServerOptions o;
  o.time_scale = 0.001;
  TestServer s(o);
  s.install("", route_toml(Dialect::anthropic, R"({ fault = "rate_429", retry_after_ms = 60000 })"));
  const auto r = s.chat(Dialect::anthropic, "/r", false);
  CHECK(r.header("retry-after-ms") == "60");
  CHECK(r.header("retry-after") == "1");
}

TEST_CASE("stream_cut closes the connection after exactly N content events, mid chunked body", "[server]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  const int n = GENERATE(0, 1, 3);
  TestServer s;
  s.install("", route_toml(d, "{ fault = \"stream_cut\", cut_after_events = " + std::to_string(n) + " }"));
  const auto r = s.chat(d, "/r", true);
  CHECK(r.status == 200);
  CHECK(r.chunked);
  CHECK(r.eof);
  CHECK_FALSE(r.timed_out);
  CHECK_FALSE(r.complete);  // no last chunk: the cut shows at the HTTP level
  CHECK(static_cast<int>(content_events(d, r).size()) == n);
  CHECK_FALSE(ends_with_terminator(d, r));
  const auto l = s.ledger("", 1);
  REQUIRE(l.size() == 1);
  CHECK(l[0].fault == FaultKind::stream_cut);
  CHECK(l[0].outcome == AttemptOutcome::cut);
  CHECK(l[0].events_sent == n);
  CHECK(l[0].committed == (n > 0));
}

TEST_CASE("stream_cut on a plain request sends half the announced body, then closes", "[server]") {
  TestServer s;
  s.install("", route_toml(Dialect::openai, R"({ fault = "stream_cut" })"));
  const auto r = s.chat(Dialect::openai, "/r", false);
  CHECK(r.status == 200);
  CHECK(r.eof);
  CHECK_FALSE(r.complete);
  CHECK(r.body.size() < std::stoul(r.header("content-length")));
  CHECK(s.ledger("", 1).at(0).outcome == AttemptOutcome::cut);
}

TEST_CASE("stream_error sends N events, then the dialect's error event, then ends cleanly", "[server]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  TestServer s;
  s.install("", route_toml(d, R"({ fault = "stream_error", cut_after_events = 2 })"));
  const auto r = s.chat(d, "/r", true);
  CHECK(r.status == 200);
  CHECK(r.complete);
  CHECK(content_events(d, r).size() == 2);
  const auto last = sse_events(r.body).back();
  if (d == Dialect::anthropic) CHECK(last.event == "error");
  if (d == Dialect::responses) {  // in band: response.failed carries the response and its error
    CHECK(last.event == "response.failed");
    CHECK(json::parse(last.data).at("response").at("error").at("code") == "server_error");
  } else {
    CHECK(json::parse(last.data).as_object().contains("error"));
  }
  const auto l = s.ledger("", 1);
  CHECK(l.at(0).events_sent == 2);
  CHECK(l.at(0).outcome == AttemptOutcome::completed);
}

TEST_CASE("stream_stall sends N events, stays silent for stall_ms, then closes mid body", "[server]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  TestServer s;
  s.install("", route_toml(d, R"({ fault = "stream_stall", cut_after_events = 1, stall_ms = 20 })"));
  const auto r = s.chat(d, "/r", true);
  CHECK(r.eof);
  CHECK_FALSE(r.complete);
  CHECK(content_events(d, r).size() == 1);
  const auto l = s.ledger("", 1);
  CHECK(l.at(0).outcome == AttemptOutcome::cut);
  CHECK(l.at(0).events_sent == 1);
}

TEST_CASE("malformed_event: one event is not JSON, the stream is otherwise complete", "[server]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  TestServer s;
  s.install("", route_toml(d, R"({ fault = "malformed_event", cut_after_events = 1 })"));
  const auto r = s.chat(d, "/r", true);
  CHECK(r.complete);
  CHECK(ends_with_terminator(d, r));
  int bad = 0;
  for (const auto& e : sse_events(r.body)) {
    if (e.data == "[DONE]") continue;
    boost::system::error_code ec;
    json::parse(e.data, ec);
    bad += ec ? 1 : 0;
  }
  CHECK(bad == 1);
  CHECK(content_events(d, r).size() == 3);
}

TEST_CASE("no_terminator: a complete HTTP stream without the end sentinel", "[server]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  TestServer s;
  s.install("", route_toml(d, R"({ fault = "no_terminator" })"));
  const auto r = s.chat(d, "/r", true);
  CHECK(r.complete);
  CHECK_FALSE(ends_with_terminator(d, r));
  CHECK(streamed_text(d, r) == text);
  CHECK(s.ledger("", 1).at(0).committed);
}

TEST_CASE("slow, slow_first_token and latency answer normally after their delays", "[server]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  TestServer s;
  s.install(
      "",
      route_toml(
          d,
          R"({ fault = "slow_first_token", first_token_ms = 5 }, { fault = "slow", p50_ms = 2, p95_ms = 4 },
                                 { fault = "ok", latency_ms = 3 })"));
  CHECK(streamed_text(d, s.chat(d, "/r", true)) == text);
  CHECK(plain_text(d, s.chat(d, "/r", false).json()) == text);
  CHECK(streamed_text(d, s.chat(d, "/r", true)) == text);
  const auto l = s.ledger("", 3);
  CHECK(l.at(0).fault == FaultKind::slow_first_token);
  CHECK(l.at(1).fault == FaultKind::slow);
  for (const auto& e : l) CHECK(e.outcome == AttemptOutcome::completed);
}

TEST_CASE("post_commit_timeout ledgers committed before the hold, sends nothing, ends on hold_ms",
          "[server]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  TestServer s;
  s.install("", route_toml(d, R"({ fault = "post_commit_timeout", hold_ms = 30 })"));
  const auto r = s.chat(d, "/r", true);
  CHECK(r.raw.empty());
  CHECK(r.eof);
  CHECK_FALSE(r.timed_out);
  const auto l = s.ledger("", 1);
  REQUIRE(l.size() == 1);
  CHECK(l[0].committed);
  CHECK(l[0].status == 0);
  CHECK(l[0].outcome == AttemptOutcome::held_then_closed);
}

TEST_CASE("a hold is committed while it lasts and ends when the client closes", "[server]") {
  const auto fault = GENERATE(std::string("post_commit_timeout"), std::string("no_response"));
  TestServer s;
  s.install("", route_toml(Dialect::openai, "{ fault = \"" + fault + "\", hold_ms = 600000 }"));
  std::atomic<bool> seen{false};
  std::vector<LedgerEntry> during;
  std::thread watcher([&] {
    for (int i = 0; i < 500 && !seen; ++i) {
      during = s.engine().ledger("");
      seen = !during.empty();
      if (!seen) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  const auto r = s.chat(Dialect::openai, "/r", false, {}, {}, 300);  // we give up after 300 ms and close
  watcher.join();
  CHECK(r.timed_out);
  CHECK(r.raw.empty());
  REQUIRE(seen);
  CHECK(during.at(0).committed == (fault == "post_commit_timeout"));  // set before the hold started
  const auto l = s.ledger("", 1);
  CHECK(l.at(0).finished);
  CHECK(l.at(0).outcome == AttemptOutcome::held_then_closed);
  CHECK(l.at(0).committed == (fault == "post_commit_timeout"));
}

TEST_CASE("connect_reset resets the connection after the request, before any byte", "[server]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  TestServer s;
  s.install("", route_toml(d, R"({ fault = "connect_reset" })"));
  const auto r = s.chat(d, "/r", true);
  CHECK(r.reset);
  CHECK(r.raw.empty());
  const auto l = s.ledger("", 1);
  CHECK(l.at(0).outcome == AttemptOutcome::reset);
  CHECK(l.at(0).status == 0);
  CHECK_FALSE(l.at(0).committed);
}

TEST_CASE("policy refuses plain requests with 400 and stops streams with the content filter", "[server]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  TestServer s;
  s.install("", route_toml(d, R"({ fault = "policy", times = 2 })"));
  const auto plain = s.chat(d, "/r", false);
  CHECK(plain.status == 400);
  check_error_body(d, plain);
  const auto streamed = s.chat(d, "/r", true);
  CHECK(streamed.status == 200);
  CHECK(streamed.complete);
  const std::string filter = d == Dialect::openai || d == Dialect::responses || d == Dialect::azure
                                 ? "content_filter"
                             : d == Dialect::anthropic ? "refusal"
                                                       : "SAFETY";
  CHECK(streamed.body.find(filter) != std::string::npos);
}

TEST_CASE("schema_missing answers 200 without the required field", "[server]") {
  TestServer s;
  s.install("",
            "[route.r]\ndialect = \"openai\"\ntext = '{\"label\": \"spam\", \"score\": 1}'\n"
            "script = [{ fault = \"schema_missing\", missing_field = \"label\" }]\n");
  const auto r = s.chat(Dialect::openai, "/r", false);
  CHECK(r.status == 200);
  const auto answer = json::parse(plain_text(Dialect::openai, r.json()));
  CHECK_FALSE(answer.as_object().contains("label"));
  CHECK(answer.as_object().contains("score"));
}

TEST_CASE("prefill_rejected refuses an assistant prefill on every dialect", "[server]") {
  TestServer s;
  for (auto d : {Dialect::openai, Dialect::anthropic, Dialect::gemini})
    s.install(std::string(to_string(d)), route_toml(d, R"({ fault = "prefill_rejected", times = 2 })"));
  const auto o = s.send(
      "POST", "/openai/r/v1/chat/completions",
      R"({"model":"m","messages":[{"role":"user","content":"a"},{"role":"assistant","content":"{"}]})");
  const auto a = s.send(
      "POST", "/anthropic/r/v1/messages",
      R"({"model":"m","max_tokens":5,"messages":[{"role":"user","content":"a"},{"role":"assistant","content":"{"}]})");
  const auto g = s.send(
      "POST", "/gemini/r/v1beta/models/g:generateContent",
      R"({"contents":[{"role":"user","parts":[{"text":"a"}]},{"role":"model","parts":[{"text":"{"}]}]})");
  for (auto* r : {&o, &a, &g}) CHECK(r->status == 400);
  check_error_body(Dialect::anthropic, a);
  CHECK(s.chat(Dialect::gemini, "/gemini/r", false).status == 200);  // no prefill: a normal answer
}

TEST_CASE("a request offering tools gets a tool call, the side effect is recorded", "[server]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  TestServer s;
  s.install("case1", route_toml(d, R"({ fault = "ok" })"));
  const std::string tools =
      d == Dialect::openai || d == Dialect::azure
          ? R"("tools":[{"type":"function","function":{"name":"create_ticket"}}])"
      : d == Dialect::anthropic ? R"("tools":[{"name":"create_ticket","input_schema":{}}])"
      : d == Dialect::responses ? R"("tools":[{"type":"function","name":"create_ticket"}])"
                                : R"("tools":[{"functionDeclarations":[{"name":"create_ticket"}]}])";
  const auto r = s.chat(d, "/case1/r", false, tools);
  REQUIRE(r.status == 200);
  CHECK(r.body.find("create_ticket") != std::string::npos);
  const auto streamed = s.chat(d, "/case1/r", true, tools);
  CHECK(streamed.body.find("create_ticket") != std::string::npos);
  CHECK(content_events(d, streamed).size() == 1);
  const auto effect =
      s.send("POST", "/case1/r/__llmchaos/side_effect", R"({"operation_id":"op-1","tool":"create_ticket"})");
  CHECK(effect.status == 200);
  CHECK(effect.json().at("duplicate") == false);
  CHECK(s.send("POST", "/case1/r/__llmchaos/side_effect", R"({"operation_id":"op-1","tool":"create_ticket"})")
            .json()
            .at("duplicate") == true);
  CHECK(s.send("POST", "/case1/r/__llmchaos/side_effect", "{}").status == 400);
  const auto effects = s.engine().side_effects("case1");
  REQUIRE(effects.size() == 2);
  CHECK(effects[0].operation_id == "op-1");
  CHECK(effects[0].tool == "create_ticket");
}

TEST_CASE("bad input: malformed JSON gets the dialect's 400, an unknown route a 404 JSON", "[server]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  TestServer s;
  s.install("", route_toml(d, R"({ fault = "ok" })"));
  const auto bad = s.send("POST", chat_call(d, "/r", false).target, "{\"model\": ");
  CHECK(bad.status == 400);
  check_error_body(d, bad);
  const auto unknown = s.send("POST", "/nope/v1/chat/completions", "{}");
  CHECK(unknown.status == 404);
  CHECK(unknown.header("content-type") == "application/json");
  CHECK(unknown.json().at("error").at("message").as_string().find("nope") != json::string::npos);
  const auto wrong_path = s.send("POST", "/r/v9/else", "{}");
  CHECK(wrong_path.status == 404);
  check_error_body(d, wrong_path);
  CHECK(s.ledger("", 2).size() == 2);  // the request errors on the route are attempts too
}

TEST_CASE("a body over the limit gets 413 in the route's dialect, bad HTTP gets 400", "[server]") {
  mock::ServerOptions o;
  o.body_limit = 1024;
  TestServer s(o);
  s.install("", route_toml(Dialect::anthropic, R"({ fault = "ok" })"));
  const auto big = s.send("POST", "/r/v1/messages", std::string(4096, 'x'));
  CHECK(big.status == 413);
  CHECK(big.json().at("error").at("type") == "request_too_large");
  const auto garbage = wire_exchange(s.port(), "NOT HTTP AT ALL\r\n\r\n");
  CHECK(garbage.status == 400);
  const auto huge_header = wire_exchange(
      s.port(), "GET /r/v1/messages HTTP/1.1\r\nx-big: " + std::string(20000, 'a') + "\r\n\r\n");
  CHECK(huge_header.status == 431);
  CHECK(s.engine().ledger("").empty());
}

TEST_CASE("request field names are read in any case, and a delimiter in a name is bad HTTP", "[server]") {
  TestServer s;
  s.install("", route_toml(Dialect::openai, R"({ fault = "ok" })"));
  const auto call = chat_call(Dialect::openai, "/r", false);
  // Upper and mixed case, one name longer than 16 bytes: the fast path lowers names 16 bytes at a time.
  const auto read =
      wire_exchange(s.port(), http_request("POST", call.target, call.body,
                                           {{"IDEMPOTENCY-KEY", "k-1"}, {"X-Stainless-Retry-Count", "2"}}));
  CHECK(read.status == 200);
  const auto l = s.ledger("", 1);
  REQUIRE(l.size() == 1);
  CHECK(l[0].idempotency_key == "k-1");
  CHECK(l[0].stainless_retry_count == "2");
  for (const std::string bad : {"x(y", "a/b", "k@v", "c{d", "x y", "q?r"}) {
    INFO(bad);
    CHECK(wire_exchange(s.port(), http_request("POST", call.target, call.body, {{bad, "1"}})).status == 400);
  }
  CHECK(s.engine().ledger("").size() == 1);
}

TEST_CASE("idle and slow connections are closed after the idle timeout", "[server]") {
  mock::ServerOptions o;
  o.idle_timeout_ms = 50;
  TestServer s(o);
  s.install("", route_toml(Dialect::openai, R"({ fault = "ok" })"));
  const auto idle = wire_exchange(s.port(), "", 5000);
  CHECK(idle.eof);
  CHECK_FALSE(idle.timed_out);
  const auto slow = wire_exchange(s.port(), "POST /r/v1/chat/completions HTTP/1.1\r\nhost: x\r\n", 5000);
  CHECK_FALSE(slow.timed_out);
  CHECK(slow.status == 0);
  // Counted just after the close the client saw: wait a bounded moment for it.
  const std::string counted = "llmchaos_server_events_total{event=\"idle_timeout\"} 2";
  for (int i = 0; i < 200 && s.engine().metrics_text().find(counted) == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(s.engine().metrics_text().find(counted) != std::string::npos);
}

TEST_CASE("keep-alive: two pipelined requests on one connection are both answered", "[server]") {
  TestServer s;
  s.install("", route_toml(Dialect::openai, R"({ fault = "rate_429" }, { fault = "ok" })"));
  const auto call = chat_call(Dialect::openai, "/r", false);
  auto first = http_request("POST", call.target, call.body);
  first.replace(first.find("connection: close"), 17, "connection: keep-alive");
  const auto r = wire_exchange(s.port(), first + http_request("POST", call.target, call.body));
  CHECK(r.status == 429);
  CHECK(r.raw.find("HTTP/1.1 200 OK") != std::string::npos);
  const auto l = s.ledger("", 2);
  REQUIRE(l.size() == 2);
  CHECK(l[1].fault == FaultKind::ok);
}

TEST_CASE("namespaces run in parallel without mixing scripts or ledgers", "[server]") {
  mock::ServerOptions o;
  o.threads = 2;
  TestServer s(o);
  constexpr int workers = 6, calls = 5;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int w = 0; w < workers; ++w) {
    threads.emplace_back([&, w] {
      const auto ns = "case" + std::to_string(w);
      const auto d = static_cast<Dialect>(w % 3);
      s.install(ns, route_toml(d, "{ fault = \"rate_429\", retry_after_ms = 1, times = " +
                                      std::to_string(w % 3 + 1) + " }"));
      for (int i = 0; i < calls; ++i) {
        const auto call = chat_call(d, "/" + ns + "/r", false);
        try {
          net::HttpCall c;
          c.port = s.port();
          c.method = "POST";
          c.target = call.target;
          c.body = call.body;
          const auto reply = net::http_call(c);
          if (reply.status != (i < w % 3 + 1 ? 429 : 200)) ++failures;
        } catch (const std::exception&) {
          ++failures;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  for (int w = 0; w < workers; ++w) {
    const auto l = s.ledger("case" + std::to_string(w), calls);
    REQUIRE(l.size() == calls);
    for (int i = 0; i < calls; ++i) {
      CHECK(l[i].attempt == i);
      CHECK(l[i].fault == (i < w % 3 + 1 ? FaultKind::rate_429 : FaultKind::ok));
      CHECK(l[i].ns == "case" + std::to_string(w));
    }
  }
}

TEST_CASE("stop() ends a held connection and finishes its ledger entry", "[server]") {
  TestServer s;
  s.install("", route_toml(Dialect::openai, R"({ fault = "post_commit_timeout", hold_ms = 600000 })"));
  WireReply r;
  std::thread client([&] { r = s.chat(Dialect::openai, "/r", true, {}, {}, 20000); });
  for (int i = 0; i < 500 && s.engine().ledger("").empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  s.server.stop();
  client.join();
  CHECK_FALSE(r.timed_out);  // the server closed it, long before the client's 20 s
  CHECK(r.raw.empty());
  const auto l = s.engine().ledger("");
  REQUIRE(l.size() == 1);
  CHECK(l[0].finished);
  CHECK(l[0].outcome == AttemptOutcome::held_then_closed);
  CHECK(l[0].committed);
}

TEST_CASE("openai /v1/models lists the asked model and is not an attempt", "[server]") {
  TestServer s;
  s.install("", route_toml(Dialect::openai, R"({ fault = "ok" })"));
  const auto r = s.send("GET", "/r/v1/models");
  CHECK(r.status == 200);
  CHECK(r.json().at("object") == "list");
  CHECK(s.engine().ledger("").empty());
}

TEST_CASE("a request with Expect: 100-continue gets the interim answer, then the real one", "[server]") {
  TestServer s;
  s.install("", route_toml(Dialect::openai, R"({ fault = "ok" })"));
  const auto call = chat_call(Dialect::openai, "/r", false);
  const auto r =
      wire_exchange(s.port(), http_request("POST", call.target, call.body, {{"expect", "100-continue"}}));
  CHECK(r.raw.rfind("HTTP/1.1 100 Continue\r\n\r\n", 0) == 0);
  CHECK(r.raw.find("HTTP/1.1 200 OK") != std::string::npos);
}

TEST_CASE("connections over the limit get 503 at once", "[server]") {
  mock::ServerOptions o;
  o.max_connections = 1;
  TestServer s(o);
  s.install("", route_toml(Dialect::openai, R"({ fault = "no_response", hold_ms = 600000 })"));
  WireReply held;
  std::thread holder([&] { held = s.chat(Dialect::openai, "/r", false, {}, {}, 2000); });
  for (int i = 0; i < 500 && s.engine().ledger("").empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto second = s.chat(Dialect::openai, "/r", false);
  holder.join();
  CHECK(second.status == 503);
  CHECK(second.json().at("error") == "too many connections");
  CHECK(held.timed_out);
}

TEST_CASE("gemini :streamGenerateContent without alt=sse answers one JSON array of the chunks",
          "[server][gemini]") {
  TestServer s;
  const std::string body = R"({"contents":[{"role":"user","parts":[{"text":"hi there"}]}]})";
  SECTION("a whole stream: the array parses, its chunks join to the text, the last carries finishReason") {
    s.install("", route_toml(Dialect::gemini, R"({ fault = "ok" })"));
    const auto r = s.send("POST", "/r/v1beta/models/gemini-x:streamGenerateContent", body);
    REQUIRE(r.status == 200);
    CHECK(r.complete);
    CHECK(r.header("content-type") == "application/json");
    CHECK(r.body.find("data:") == std::string::npos);
    const auto v = json::parse(r.body);
    REQUIRE(v.is_array());
    std::string joined;
    for (const auto& chunk : v.as_array())
      for (const auto& part : chunk.at("candidates").at(0).at("content").at("parts").as_array())
        joined += json::value_to<std::string>(part.at("text"));
    CHECK(joined == text);
    CHECK(v.as_array().back().at("candidates").at(0).at("finishReason") == "STOP");
    CHECK(s.ledger("", 1).at(0).events_sent == 4);
  }
  SECTION("another query parameter is not alt=sse, with alt=sse among others the stream stays SSE") {
    s.install("", route_toml(Dialect::gemini, R"({ fault = "ok" })"));
    CHECK(json::parse(s.send("POST", "/r/v1beta/models/gemini-x:streamGenerateContent?key=k", body).body)
              .is_array());
    const auto sse = s.send("POST", "/r/v1beta/models/gemini-x:streamGenerateContent?key=k&alt=sse", body);
    CHECK(sse.header("content-type") == "text/event-stream");
  }
  SECTION("a cut array stays open: no closing bracket, the connection closes mid body") {
    s.install("", route_toml(Dialect::gemini, R"({ fault = "stream_cut", cut_after_events = 2 })"));
    const auto r = s.send("POST", "/r/v1beta/models/gemini-x:streamGenerateContent", body);
    CHECK_FALSE(r.complete);
    CHECK(r.body.front() == '[');
    CHECK(r.body.find(']', r.body.rfind('}')) == std::string::npos);
    CHECK(s.ledger("", 1).at(0).events_sent == 2);
  }
}

TEST_CASE("a client that half-closes after its last kept-alive request gets the answer, then the end at once",
          "[server]") {
  // Requests one at a time first (so the session mostly stops trying a read right after each answer: the
  // read that waits is then the one that must see the end), then the last one and the FIN in one segment:
  // the read that takes the request finds the end queued behind it, and no later event says so. The
  // session must still see the end, not wait out the idle timeout.
  mock::ServerOptions o;
  o.idle_timeout_ms = 30000;
  TestServer s(o);
  s.install("", route_toml(Dialect::openai, R"({ fault = "ok", times = 100 })"));
  const auto call = chat_call(Dialect::openai, "/r", false);
  boost::asio::io_context io;
  boost::asio::ip::tcp::socket socket(io);
  socket.connect({boost::asio::ip::make_address("127.0.0.1"), s.port()});
  const timeval five_seconds{5, 0};  // a regression fails here instead of hanging for the idle timeout
  ::setsockopt(socket.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &five_seconds, sizeof five_seconds);
  const std::string request = "POST " + call.target +
                              " HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " +
                              std::to_string(call.body.size()) + "\r\n\r\n" + call.body;
  std::array<char, 65536> buf{};
  boost::system::error_code ec;
  for (int i = 0; i < 40 && !ec; ++i) {
    boost::asio::write(socket, boost::asio::buffer(request));
    std::string answer;
    while (!ec && answer.find("\"finish_reason\"") == std::string::npos)  // the whole JSON answer
      answer.append(buf.data(), socket.read_some(boost::asio::buffer(buf), ec));
  }
  REQUIRE_FALSE(ec);
  const int one = 1;  // corked: the shutdown sends the request and the FIN in one segment
  ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_CORK, &one, sizeof one);
  boost::asio::write(socket, boost::asio::buffer(request));
  socket.shutdown(boost::asio::ip::tcp::socket::shutdown_send);
  const auto t0 = std::chrono::steady_clock::now();
  std::string got;
  while (!ec) got.append(buf.data(), socket.read_some(boost::asio::buffer(buf), ec));
  CHECK(ec == boost::asio::error::eof);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3));
  CHECK(got.rfind("HTTP/1.1 200", 0) == 0);
}
