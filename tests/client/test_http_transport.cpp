// The Beast HTTP/SSE client against the real mock provider over loopback, for every dialect, plain and
// streamed: what each fault looks like to the client (event, tokens, status) and what the mock saw.
#include <atomic>
#include <catch2/catch.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "llmchaos/client/http_transport.hpp"
#include "mock_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::client;
using llmchaos::test::MockFixture;
using llmchaos::test::route_toml;

namespace {

const std::string canonical = "alpha beta gamma delta";

struct Sent {
  AttemptResult result;
  std::vector<std::string> tokens;
};

struct Loopback {
  MockFixture mock;
  HttpTransport transport;
  SteadyClock clock;
  explicit Loopback(mock::ServerOptions options = {}) : mock(std::move(options)) {}

  Sent send(Dialect d, bool stream, double timeout_ms = 2000, bool tool_call = false,
            std::optional<ToolTurn> turn = std::nullopt) {
    AttemptRequest req;
    req.endpoint = mock.endpoint("r", d);
    req.stream = stream;
    req.operation_id = "op-test";
    req.timeout_ms = timeout_ms;
    req.tool_call = tool_call;
    req.tool_turn = std::move(turn);
    Sent s;
    s.result = transport.send(req, clock, [&](std::string_view t) { s.tokens.emplace_back(t); });
    return s;
  }
};

std::string joined(const std::vector<std::string>& tokens) {
  std::string out;
  for (const auto& t : tokens) out += t;
  return out;
}

}  // namespace

TEST_CASE("http transport: a healthy answer arrives whole, plain or streamed, with the idempotency key",
          "[http_transport]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  const bool stream = GENERATE(false, true);
  CAPTURE(d, stream);
  Loopback t;
  t.mock.install(route_toml("r", d, R"({ fault = "ok" })"));
  auto s = t.send(d, stream);
  CHECK(s.result.status == 200);
  CHECK(s.result.event == TransportEvent::none);
  CHECK(s.result.error.empty());
  CHECK(s.result.text == canonical);
  CHECK(joined(s.tokens) == canonical);
  CHECK_FALSE(s.result.model.empty());
  if (stream) {
    CHECK(s.result.terminated);
    CHECK(s.result.content_events == 4);  // one event per word
    CHECK(s.tokens.size() == 4);
  } else {
    CHECK(s.tokens.size() == 1);  // a plain answer becomes visible at once
  }
  auto ledger = t.mock.ledger(1);
  REQUIRE(ledger.size() == 1);
  CHECK(ledger[0].idempotency_key == "op-test");
  CHECK(ledger[0].stream == stream);
  CHECK(ledger[0].route == "r");
}

TEST_CASE("http transport: a stream cut after N events is stream_closed with N tokens", "[http_transport]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  CAPTURE(d);
  Loopback t;
  t.mock.install(route_toml("r", d, R"({ fault = "stream_cut", cut_after_events = 2 })"));
  auto s = t.send(d, true);
  CHECK(s.result.status == 200);
  CHECK(s.result.event == TransportEvent::stream_closed);
  CHECK(s.result.content_events == 2);
  CHECK(joined(s.tokens) == "alpha beta ");
  CHECK_FALSE(s.result.terminated);
  auto ledger = t.mock.ledger(1);
  REQUIRE(ledger.size() == 1);
  CHECK(ledger[0].events_sent == 2);
}

TEST_CASE("http transport: a reset before any response byte is reset_before_response", "[http_transport]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  const bool stream = GENERATE(false, true);
  CAPTURE(d, stream);
  Loopback t;
  t.mock.install(route_toml("r", d, R"({ fault = "connect_reset" })"));
  auto s = t.send(d, stream);
  CHECK(s.result.status == 0);
  CHECK(s.result.event == TransportEvent::reset_before_response);
  CHECK(s.result.error.find("route r attempt 0") != std::string::npos);
  CHECK(s.tokens.empty());
  CHECK(t.mock.ledger(1).size() == 1);  // the mock read the request: one attempt, not zero, not two
}

TEST_CASE("http transport: silence after the request is timeout_no_byte after the attempt timeout",
          "[http_transport]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  CAPTURE(d);
  Loopback t;
  t.mock.install(route_toml("r", d, R"({ fault = "no_response", hold_ms = 20000 })"));
  auto s = t.send(d, false, 100);
  CHECK(s.result.status == 0);
  CHECK(s.result.event == TransportEvent::timeout_no_byte);
  auto ledger = t.mock.ledger(1);
  REQUIRE(ledger.size() == 1);
  CHECK(ledger[0].outcome == AttemptOutcome::held_then_closed);  // the client gave up and closed
}

TEST_CASE("http transport: a stream that stalls longer than the attempt timeout is stream_idle_timeout",
          "[http_transport]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  CAPTURE(d);
  Loopback t;
  t.mock.install(route_toml("r", d, R"({ fault = "stream_stall", cut_after_events = 1, stall_ms = 20000 })"));
  auto s = t.send(d, true, 150);
  CHECK(s.result.status == 200);
  CHECK(s.result.event == TransportEvent::stream_idle_timeout);
  CHECK(s.result.content_events == 1);
  CHECK(joined(s.tokens) == "alpha ");
}

TEST_CASE("http transport: a slow first token within the attempt timeout is no failure", "[http_transport]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  CAPTURE(d);
  Loopback t;
  t.mock.install(route_toml("r", d, R"({ fault = "slow_first_token", first_token_ms = 30 })"));
  auto s = t.send(d, true, 5000);
  CHECK(s.result.event == TransportEvent::none);
  CHECK(s.result.text == canonical);
}

TEST_CASE("http transport: an in-stream error event is stream_error_event with its data",
          "[http_transport]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  CAPTURE(d);
  Loopback t;
  t.mock.install(route_toml("r", d, R"({ fault = "stream_error", cut_after_events = 1 })"));
  auto s = t.send(d, true);
  CHECK(s.result.status == 200);
  CHECK(s.result.event == TransportEvent::stream_error_event);
  CHECK(s.result.content_events == 1);
  CHECK(s.result.body.find("error") != std::string::npos);
}

TEST_CASE("http transport: a non-JSON event is malformed_event", "[http_transport]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  const bool stream = GENERATE(false, true);
  CAPTURE(d, stream);
  Loopback t;
  t.mock.install(route_toml("r", d, R"({ fault = "malformed_event", cut_after_events = 1 })"));
  auto s = t.send(d, stream);
  CHECK(s.result.status == 200);
  CHECK(s.result.event == TransportEvent::malformed_event);
  if (stream) CHECK(s.result.content_events == 1);
}

TEST_CASE("http transport: a complete stream without the dialect's end is missing_terminator",
          "[http_transport]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  CAPTURE(d);
  Loopback t;
  t.mock.install(route_toml("r", d, R"({ fault = "no_terminator" })"));
  auto s = t.send(d, true);
  CHECK(s.result.status == 200);
  CHECK(s.result.event == TransportEvent::missing_terminator);
  CHECK(s.result.text == canonical);
}

TEST_CASE("http transport: an error status comes back with its body and retry-after headers",
          "[http_transport]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  const bool stream = GENERATE(false, true);
  CAPTURE(d, stream);
  Loopback t;
  t.mock.install(route_toml("r", d, R"({ fault = "rate_429", retry_after_ms = 1500 })"));
  auto s = t.send(d, stream);
  CHECK(s.result.status == 429);
  CHECK(s.result.event == TransportEvent::none);
  CHECK(s.result.body.find("error") != std::string::npos);
  bool has_retry_after = false;
  for (const auto& [k, v] : s.result.headers) has_retry_after = has_retry_after || k == "retry-after-ms";
  CHECK(has_retry_after);
  CHECK(s.tokens.empty());
}

TEST_CASE("http transport: a tool request gets a tool call, the follow-up gets the text",
          "[http_transport]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  const bool stream = GENERATE(false, true);
  CAPTURE(d, stream);
  Loopback t;
  t.mock.install(route_toml("r", d, R"({ fault = "ok", times = 2 })"));
  auto call = t.send(d, stream, 2000, true);
  CHECK(call.result.event == TransportEvent::none);
  REQUIRE(call.result.tool_call);
  CHECK(call.result.tool_name == "record_label");
  CHECK(t.transport.side_effect(t.mock.endpoint("r", d), "op-test", call.result.tool_name));
  auto final_answer =
      t.send(d, stream, 2000, true,
             ToolTurn{call.result.tool_call_id, call.result.tool_name, call.result.tool_arguments, "ok"});
  CHECK_FALSE(final_answer.result.tool_call);
  CHECK(final_answer.result.text == canonical);
  auto effects = t.mock.side_effects();
  REQUIRE(effects.size() == 1);
  CHECK(effects[0].operation_id == "op-test");
  CHECK(effects[0].tool == "record_label");
}

TEST_CASE("http transport: consecutive attempts share one keep-alive connection", "[http_transport]") {
  Loopback t;
  t.mock.install(route_toml("r", Dialect::openai, R"({ fault = "ok", times = 3 })"));
  for (bool stream : {false, true, false}) CHECK(t.send(Dialect::openai, stream).result.text == canonical);
  CHECK(t.transport.stats().connects == 1);
  CHECK(t.transport.stats().reused == 2);
  CHECK(t.mock.ledger(3).size() == 3);
}

TEST_CASE("http transport: a keep-alive connection the server closed is replaced, not counted as an attempt",
          "[http_transport]") {
  mock::ServerOptions options;
  options.idle_timeout_ms = 30;
  Loopback t(options);
  t.mock.install(route_toml("r", Dialect::anthropic, R"({ fault = "ok", times = 2 })"));
  CHECK(t.send(Dialect::anthropic, false).result.event == TransportEvent::none);
  // Wait (bounded) until the server's idle timeout closed the kept connection.
  for (int i = 0;
       i < 300 && t.mock.server.engine().metrics_text().find("event=\"idle_timeout\"") == std::string::npos;
       ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  auto second = t.send(Dialect::anthropic, false);
  CHECK(second.result.event == TransportEvent::none);
  CHECK(second.result.text == canonical);
  const auto stats = t.transport.stats();
  CHECK(stats.connects == 2);
  CHECK(stats.stale_dropped + stats.stale_resent == 1);
  CHECK(t.mock.ledger(2).size() == 2);  // exactly the two attempts: nothing resent twice
}

TEST_CASE("http transport: a closed port is connect_failed naming the route", "[http_transport]") {
  std::string base;
  {
    MockFixture gone;  // a port that was just free again
    base = gone.endpoint("r", Dialect::openai).base_url;
  }
  HttpTransport transport;
  SteadyClock clock;
  AttemptRequest req;
  req.endpoint = {"r", Dialect::openai, base};
  req.timeout_ms = 1000;
  auto r = transport.send(req, clock, [](std::string_view) {});
  CHECK(r.event == TransportEvent::connect_failed);
  CHECK(r.error.find("route r") != std::string::npos);
  CHECK_FALSE(transport.side_effect(req.endpoint, "op", "record_label"));
}

TEST_CASE("http transport: callers on several threads share one transport", "[http_transport]") {
  Loopback t;
  t.mock.install(route_toml("r", Dialect::gemini, R"({ fault = "ok", latency_ms = 30, times = 8 })"));
  std::vector<std::thread> callers;
  std::atomic<int> whole{0};
  for (int i = 0; i < 4; ++i)
    callers.emplace_back([&] {
      for (int k = 0; k < 2; ++k) whole += t.send(Dialect::gemini, k == 1).result.text == canonical;
    });
  for (auto& c : callers) c.join();
  CHECK(whole == 8);
  CHECK(t.mock.ledger(8).size() == 8);
  const auto stats = t.transport.stats();
  CHECK(stats.connects + stats.reused == 8);  // every attempt had exactly one connection
  CHECK(stats.connects <= 4);                 // never more connections than concurrent callers
}
