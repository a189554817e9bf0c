// The virtual-time transport: mock plans played under a ManualClock (timing asserted on the virtual clock
// only), and the same answers as the live HTTP transport for the same scripts.
#include <fmt/format.h>

#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "llmchaos/client/http_transport.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/harness/virtual_transport.hpp"
#include "llmchaos/mockprovider/engine.hpp"
#include "llmchaos/mockprovider/script.hpp"
#include "llmchaos/mockprovider/server.hpp"

using namespace llmchaos;
using namespace llmchaos::harness;

namespace {

mock::Script script_of(Dialect d, const std::string& steps, const std::string& text = "one two three four") {
  return mock::parse_script_text(
      fmt::format("[route.r]\ndialect = \"{}\"\ntext = \"{}\"\nscript = [{}]\n", to_string(d), text, steps),
      "test script");
}

client::AttemptRequest request(Dialect d, bool stream, const std::string& base = "http://virtual.mock/ns/r") {
  client::AttemptRequest req;
  req.endpoint = client::Endpoint{"r", d, base};
  req.stream = stream;
  req.operation_id = "op-test";
  req.timeout_ms = 1000;
  return req;
}

// One attempt through the virtual transport, with the virtual time of every visible token.
struct Sim {
  ManualClock clock;
  mock::Engine engine{clock};
  VirtualTransport transport{engine};
  std::vector<std::string> tokens;
  std::vector<double> token_ms;
  client::AttemptResult result;

  Sim(Dialect d, const std::string& steps, bool stream, double timeout_ms = 1000) {
    engine.install("ns", script_of(d, steps));
    auto req = request(d, stream);
    req.timeout_ms = timeout_ms;
    result = transport.send(req, clock, [&](std::string_view t) {
      tokens.emplace_back(t);
      token_ms.push_back(clock.now_ms());
    });
  }
  LedgerEntry entry() const {
    auto l = engine.ledger("ns");
    REQUIRE(l.size() == 1);
    return l.front();
  }
};

const auto all_dialects = {Dialect::openai, Dialect::anthropic, Dialect::gemini};

}  // namespace

TEST_CASE(
    "virtual transport: a streamed answer arrives token by token, inter_event_ms apart on the virtual clock",
    "[virtual]") {
  const Dialect d = GENERATE(values(all_dialects));
  Sim s(d, R"({ fault = "ok", inter_event_ms = 10 })", true);
  CHECK(s.result.event == client::TransportEvent::none);
  CHECK(s.result.terminated);
  CHECK(s.result.text == "one two three four");
  REQUIRE(s.tokens.size() == 4);
  CHECK(s.result.content_events == 4);
  for (std::size_t i = 1; i < s.token_ms.size(); ++i) CHECK(s.token_ms[i] - s.token_ms[i - 1] == Approx(10));
  const auto e = s.entry();
  CHECK(e.outcome == AttemptOutcome::completed);
  CHECK(e.events_sent == 4);
  CHECK(e.committed);
  CHECK(e.finished_at_ms == Approx(s.clock.now_ms()));
}

TEST_CASE("virtual transport: a hold past the attempt timeout is timeout_no_byte exactly at the timeout",
          "[virtual]") {
  const Dialect d = GENERATE(values(all_dialects));
  Sim s(d, R"({ fault = "no_response" })", false, 700);
  CHECK(s.result.event == client::TransportEvent::timeout_no_byte);
  CHECK(s.result.status == 0);
  CHECK(s.clock.now_ms() == Approx(700));
  const auto e = s.entry();
  CHECK(e.outcome == AttemptOutcome::held_then_closed);
  CHECK(e.status == 0);
  CHECK_FALSE(e.committed);
  CHECK(e.finished_at_ms == Approx(700));
}

TEST_CASE("virtual transport: a hold shorter than the timeout is a close before any response byte",
          "[virtual]") {
  Sim s(Dialect::openai, R"({ fault = "post_commit_timeout", hold_ms = 200 })", false);
  CHECK(s.result.event == client::TransportEvent::reset_before_response);
  CHECK(s.clock.now_ms() == Approx(200));
  CHECK(s.entry().committed);  // post_commit_timeout: the provider did the work on arrival
}

TEST_CASE("virtual transport: connect_reset is a reset before any byte, in no time", "[virtual]") {
  Sim s(Dialect::anthropic, R"({ fault = "connect_reset" })", true);
  CHECK(s.result.event == client::TransportEvent::reset_before_response);
  CHECK(s.clock.now_ms() == 0);
  CHECK(s.entry().outcome == AttemptOutcome::reset);
}

TEST_CASE("virtual transport: latency past the timeout sends no byte, the mock sees the client close",
          "[virtual]") {
  Sim s(Dialect::gemini, R"({ fault = "ok", latency_ms = 1500 })", false);
  CHECK(s.result.event == client::TransportEvent::timeout_no_byte);
  CHECK(s.clock.now_ms() == Approx(1000));
  CHECK(s.entry().outcome == AttemptOutcome::client_closed);
  CHECK(s.entry().status == 0);
}

TEST_CASE("virtual transport: a stall shorter than the timeout is a cut, a longer one an idle timeout",
          "[virtual]") {
  const Dialect d = GENERATE(values(all_dialects));
  SECTION("short stall: the mock closes mid-body") {
    Sim s(d, R"({ fault = "stream_stall", cut_after_events = 2, stall_ms = 300 })", true);
    CHECK(s.result.event == client::TransportEvent::stream_closed);
    CHECK(s.tokens.size() == 2);
    CHECK(s.clock.now_ms() == Approx(300));
    CHECK(s.entry().outcome == AttemptOutcome::cut);
    CHECK(s.entry().events_sent == 2);
  }
  SECTION("long stall: the client's idle timeout fires first") {
    Sim s(d, R"({ fault = "stream_stall", cut_after_events = 1, stall_ms = 5000 })", true);
    CHECK(s.result.event == client::TransportEvent::stream_idle_timeout);
    CHECK(s.tokens.size() == 1);
    CHECK(s.clock.now_ms() == Approx(1000));
    CHECK(s.entry().outcome == AttemptOutcome::client_closed);
  }
}

TEST_CASE("virtual transport: a malformed event stops the stream and the mock writes nothing after it",
          "[virtual]") {
  const Dialect d = GENERATE(values(all_dialects));
  Sim s(d, R"({ fault = "malformed_event", cut_after_events = 1 })", true);
  CHECK(s.result.event == client::TransportEvent::malformed_event);
  CHECK(s.tokens.size() == 1);
  CHECK(s.entry().events_sent == 1);
  CHECK(s.entry().outcome == AttemptOutcome::client_closed);
}

TEST_CASE("virtual transport: an error status carries the dialect's body and the retry-after headers",
          "[virtual]") {
  Sim s(Dialect::openai, R"({ fault = "rate_429", retry_after_ms = 700 })", false);
  CHECK(s.result.status == 429);
  CHECK(s.result.event == client::TransportEvent::none);
  CHECK(s.result.body.find("rate") != std::string::npos);
  bool hint = false;
  for (const auto& [k, v] : s.result.headers) hint = hint || (k == "retry-after-ms" && v == "700");
  CHECK(hint);
}

TEST_CASE("virtual transport: a tool side effect is recorded by the engine with its operation id",
          "[virtual]") {
  ManualClock clock;
  mock::Engine engine(clock);
  engine.install("ns", script_of(Dialect::openai, R"({ fault = "ok" })"));
  VirtualTransport t(engine);
  REQUIRE(t.side_effect(client::Endpoint{"r", Dialect::openai, "http://virtual.mock/ns/r"}, "op-7",
                        "record_label"));
  const auto effects = engine.side_effects("ns");
  REQUIRE(effects.size() == 1);
  CHECK(effects.front().operation_id == "op-7");
  CHECK(effects.front().tool == "record_label");
}

// The same script through real sockets and through the virtual wire: what the client reads must match.
TEST_CASE("virtual transport: the answer read equals the live HTTP transport's for the same script",
          "[virtual][live]") {
  const Dialect d = GENERATE(values(all_dialects));
  const bool stream = GENERATE(false, true);
  const std::string steps = GENERATE(
      as<std::string>{}, R"({ fault = "ok" })", R"({ fault = "rate_429" })", R"({ fault = "overloaded" })",
      R"({ fault = "quota_429" })", R"({ fault = "stream_cut", cut_after_events = 2 })",
      R"({ fault = "stream_error", cut_after_events = 1 })",
      R"({ fault = "malformed_event", cut_after_events = 1, inter_event_ms = 50 })",
      R"({ fault = "no_terminator" })", R"({ fault = "policy", cut_after_events = 1 })",
      R"({ fault = "connect_reset" })", R"({ fault = "schema_missing" })", R"({ fault = "auth" })");
  CAPTURE(to_string(d), stream, steps);

  mock::ServerOptions so;
  mock::MockServer server(so);
  server.start();
  server.engine().install("ns", script_of(d, steps));
  client::HttpTransport http;
  SteadyClock real;
  int live_tokens = 0;
  const auto live = http.send(request(d, stream, server.base_url() + "/ns/r"), real,
                              [&](std::string_view) { ++live_tokens; });

  Sim sim(d, steps, stream);
  const auto& v = sim.result;
  CHECK(v.status == live.status);
  CHECK(v.event == live.event);
  CHECK(v.text == live.text);
  CHECK(v.content_events == live.content_events);
  CHECK(v.events == live.events);
  CHECK(static_cast<int>(sim.tokens.size()) == live_tokens);
  CHECK(v.terminated == live.terminated);
  CHECK(v.finish_reason == live.finish_reason);
  CHECK(v.model == live.model);
  CHECK(v.output_tokens == live.output_tokens);
  CHECK(v.body == live.body);
  server.stop();
}
