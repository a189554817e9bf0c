// `llmchaos proxy` on loopback: the upstream is a mock provider (`serve`) or a small raw server of the
// test, the proxy is the same server with an upstream forwarder. A fault through the proxy must reach the
// client as the same fault from `serve` does.
#include <fmt/format.h>

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>

#include "llmchaos/core/eventstream.hpp"
#include "llmchaos/core/ledger.hpp"
#include "llmchaos/net/http_call.hpp"
#include "llmchaos/proxy/proxy.hpp"
#include "one_shot_upstream.hpp"
#include "server_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::test;
namespace json = boost::json;

namespace {
const std::string words = "alpha beta gamma delta epsilon zeta";

std::string script_toml(Dialect d, const std::string& steps, const std::string& extra = {}) {
  return "[route.r]\ndialect = \"" + std::string(to_string(d)) + "\"\ntext = \"" + words + "\"\n" + extra +
         "script = [" + steps + "]\n";
}

mock::ServerOptions proxy_options(const proxy::ProxyScript& script,
                                  const std::string& default_upstream = {}) {
  proxy::UpstreamOptions up;
  up.upstream = default_upstream;
  up.routes = script.upstreams;
  up.connect_timeout_ms = 2000;
  mock::ServerOptions o;
  o.forwarder = proxy::make_upstream_forwarder(up);
  return o;
}

// `serve` as the upstream (always ok unless told), the proxy in front of it with `steps` on route r.
struct Proxied {
  Proxied(Dialect d, const std::string& steps, const std::string& upstream_steps = R"({ fault = "ok" })")
      : script(proxy::parse_proxy_script(script_toml(d, steps, "upstream = \"" + upstream_base() + "/r\"\n"),
                                         "proxy.toml")),
        proxy(proxy_options(script)) {
    upstream.install("", script_toml(d, upstream_steps));
    proxy.engine().install("", script.script);
  }
  std::string upstream_base() { return upstream.server.base_url(); }
  TestServer upstream;
  proxy::ProxyScript script;
  TestServer proxy;
};

std::vector<std::string> texts(Dialect d, const WireReply& r) {
  std::vector<std::string> out;
  for (const auto& e : sse_events(r.body))
    if (auto t = event_text(d, e); !t.empty()) out.push_back(t);
  return out;
}

int not_json(const WireReply& r) {
  int bad = 0;
  for (const auto& e : sse_events(r.body)) {
    if (e.data == "[DONE]" || e.data.empty()) continue;
    boost::system::error_code ec;
    json::parse(e.data, ec);
    bad += ec ? 1 : 0;
  }
  return bad;
}

bool has_error_event(const WireReply& r) {
  for (const auto& e : sse_events(r.body))
    if (e.event == "error" || e.data.find("\"error\"") != std::string::npos) return true;
  return false;
}

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
    case Dialect::bedrock:  // binary frames: messages() below reads them
      return false;
  }
  return false;
}

std::string chunked_sse(const std::vector<std::string>& frames) {
  std::string out =
      "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n";
  for (const auto& f : frames) out += fmt::format("{:x}\r\n{}\r\n", f.size(), f);
  return out + "0\r\n\r\n";
}
}  // namespace

TEST_CASE("a stream cut after 3 real events through the proxy reaches the client as a cut from serve does",
          "[proxy]") {
  const auto d = GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini);
  CAPTURE(to_string(d));
  TestServer serve;
  serve.install("", script_toml(d, R"({ fault = "stream_cut", cut_after_events = 3 })"));
  const auto direct = serve.chat(d, "/r", true);

  Proxied p(d, R"({ fault = "stream_cut", cut_after_events = 3 })");
  const auto via = p.proxy.chat(d, "/r", true);
  CHECK(via.status == direct.status);
  CHECK(via.chunked);
  CHECK(via.eof == direct.eof);
  CHECK_FALSE(via.complete);
  CHECK_FALSE(via.timed_out);
  CHECK(texts(d, via) == texts(d, direct));
  CHECK(texts(d, via) == std::vector<std::string>{"alpha ", "beta ", "gamma "});
  CHECK_FALSE(ends_with_terminator(d, via));

  const auto l = p.proxy.ledger("", 1);
  REQUIRE(l.size() == 1);
  CHECK(l[0].fault == FaultKind::stream_cut);
  CHECK(l[0].outcome == AttemptOutcome::cut);
  CHECK(l[0].events_sent == 3);
  CHECK(l[0].committed);
  CHECK(l[0].forwarded);
  CHECK(l[0].upstream_status == 200);
  CHECK(l[0].upstream_head_ms > 0);
  CHECK(l[0].upstream_ms >= l[0].upstream_head_ms);
  CHECK(p.upstream.ledger("", 1).size() == 1);  // the real answer was asked for once
}

TEST_CASE(
    "post_commit_timeout through the proxy: the upstream answered in full, the proxy's ledger says "
    "committed, the client saw nothing",
    "[proxy]") {
  const auto d = GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini);
  CAPTURE(to_string(d));
  Proxied p(d, R"({ fault = "post_commit_timeout", hold_ms = 300 })");
  const auto r = p.proxy.chat(d, "/r", true, {}, {}, 3000);
  CHECK(r.raw.empty());
  CHECK(r.status == 0);
  CHECK_FALSE(r.timed_out);  // the hold ended and the proxy closed

  const auto up = p.upstream.ledger("", 1);
  REQUIRE(up.size() == 1);
  CHECK(up[0].outcome == AttemptOutcome::completed);
  CHECK(up[0].events_sent == 6);
  CHECK(up[0].committed);

  const auto l = p.proxy.ledger("", 1);
  REQUIRE(l.size() == 1);
  CHECK(l[0].fault == FaultKind::post_commit_timeout);
  CHECK(l[0].committed);
  CHECK(l[0].status == 0);
  CHECK(l[0].outcome == AttemptOutcome::held_then_closed);
  CHECK(l[0].forwarded);
  CHECK(l[0].upstream_status == 200);
}

TEST_CASE("faults before forwarding are answered by the proxy and never reach the upstream", "[proxy]") {
  const auto d = GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini);
  CAPTURE(to_string(d));
  Proxied p(
      d, R"({ fault = "rate_429", retry_after_ms = 1000 }, { fault = "server_500" }, { fault = "overloaded" },
                 { fault = "auth" }, { fault = "quota_429" }, { fault = "connect_reset" }, { fault = "ok" })");
  for (const int status : {429, 500, d == Dialect::anthropic ? 529 : 503, 401, 429}) {
    const auto r = p.proxy.chat(d, "/r", false);
    CHECK(r.status == status);
  }
  CHECK(p.proxy.chat(d, "/r", false).reset);
  CHECK(p.upstream.engine().ledger("").empty());
  const auto ok = p.proxy.chat(d, "/r", true);
  CHECK(ok.status == 200);
  CHECK(texts(d, ok).size() == 6);
  CHECK(ends_with_terminator(d, ok));
  CHECK(p.upstream.ledger("", 1).size() == 1);
  const auto l = p.proxy.ledger("", 7);
  REQUIRE(l.size() == 7);
  CHECK_FALSE(l[0].forwarded);
  CHECK(l[6].forwarded);
  CHECK(l[6].events_sent == 6);
}

TEST_CASE("the catalog's stream faults through the proxy reach the client as they do from serve", "[proxy]") {
  const auto d = GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini);
  const std::string step =
      GENERATE(std::string(R"({ fault = "stream_error", cut_after_events = 2 })"),
               std::string(R"({ fault = "malformed_event", cut_after_events = 1 })"),
               std::string(R"({ fault = "no_terminator" })"),
               std::string(R"({ fault = "stream_stall", cut_after_events = 1, stall_ms = 30 })"),
               std::string(R"({ fault = "stream_cut", cut_after_events = 0 })"),
               std::string(R"({ fault = "ok", inter_event_ms = 5 })"));
  CAPTURE(to_string(d), step);
  TestServer serve;
  serve.install("", script_toml(d, step));
  const auto direct = serve.chat(d, "/r", true);
  Proxied p(d, step);
  const auto via = p.proxy.chat(d, "/r", true);
  CHECK(via.status == direct.status);
  CHECK(via.complete == direct.complete);
  CHECK(via.eof == direct.eof);
  CHECK(texts(d, via) == texts(d, direct));
  CHECK(not_json(via) == not_json(direct));
  CHECK(has_error_event(via) == has_error_event(direct));
  CHECK(ends_with_terminator(d, via) == ends_with_terminator(d, direct));
  const auto a = serve.ledger("", 1).at(0), b = p.proxy.ledger("", 1).at(0);
  CHECK(b.fault == a.fault);
  CHECK(b.outcome == a.outcome);
  CHECK(b.events_sent == a.events_sent);
  CHECK(b.committed == a.committed);
}

// A bedrock stream read as its messages: each one's event or exception type, the text of its deltas, and
// what the decoder says of the bytes after the last whole message.
struct Messages {
  std::vector<std::string> types;
  std::string text;
  eventstream::DecodeError left = eventstream::DecodeError::none;
};
Messages messages(const WireReply& r) {
  eventstream::Decoder decoder;
  decoder.feed(r.body);
  Messages out;
  while (auto m = decoder.next()) {
    const bool event = m->text(":message-type") == "event";
    out.types.emplace_back(event ? m->text(":event-type") : m->text(":exception-type"));
    if (event && m->text(":event-type") == "contentBlockDelta")
      out.text += json::value_to<std::string>(json::parse(m->payload).at("delta").at("text"));
  }
  out.left = decoder.error();
  return out;
}

TEST_CASE("bedrock's stream faults through the proxy edit the real event stream as serve sends them",
          "[proxy][bedrock]") {
  const std::string step = GENERATE(
      std::string(R"({ fault = "stream_error", cut_after_events = 2 })"),
      std::string(R"({ fault = "stream_error", cut_after_events = 1, body = "throttlingException" })"),
      std::string(R"({ fault = "malformed_event", cut_after_events = 1 })"),
      std::string(R"({ fault = "no_terminator" })"),
      std::string(R"({ fault = "stream_cut", cut_after_events = 3 })"),
      std::string(R"({ fault = "ok", inter_event_ms = 5 })"));
  CAPTURE(step);
  const auto d = Dialect::bedrock;
  TestServer serve;
  serve.install("", script_toml(d, step));
  const auto direct = serve.chat(d, "/r", true);
  Proxied p(d, step);
  const auto via = p.proxy.chat(d, "/r", true);
  REQUIRE(via.status == 200);
  CHECK(via.header("content-type") == "application/vnd.amazon.eventstream");
  const auto a = messages(direct), b = messages(via);
  CHECK(b.types == a.types);  // the same frames in the same order, exception frames included
  CHECK(b.text == a.text);
  CHECK(b.left == a.left);  // a bad checksum stays one
  CHECK(via.complete == direct.complete);
  const auto la = serve.ledger("", 1).at(0), lb = p.proxy.ledger("", 1).at(0);
  CHECK(lb.forwarded);
  CHECK(lb.fault == la.fault);
  CHECK(lb.outcome == la.outcome);
  CHECK(lb.events_sent == la.events_sent);
}

TEST_CASE("slow_first_token and latency_ms through the proxy delay the real answer", "[proxy]") {
  Proxied p(Dialect::openai,
            R"({ fault = "slow_first_token", first_token_ms = 150 }, { fault = "ok", latency_ms = 150 })");
  for (int i = 0; i < 2; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = p.proxy.chat(Dialect::openai, "/r", true);
    const auto ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CHECK(r.complete);
    CHECK(texts(Dialect::openai, r).size() == 6);
    CHECK(ms >= 140);
  }
}

TEST_CASE("a plain answer through the proxy passes through, and a plain cut sends half the real body",
          "[proxy]") {
  Proxied p(Dialect::openai, R"({ fault = "ok" }, { fault = "stream_cut" })");
  const auto whole = p.proxy.chat(Dialect::openai, "/r", false);
  CHECK(whole.status == 200);
  CHECK(whole.complete);
  CHECK(whole.json().at("choices").at(0).at("message").at("content").as_string() == words);
  const auto cut = p.proxy.chat(Dialect::openai, "/r", false);
  CHECK(cut.status == 200);
  CHECK_FALSE(cut.complete);
  CHECK(cut.body.size() == std::stoul(cut.header("content-length")) / 2);
}

TEST_CASE("the upstream's own error passes through with its status, and the ledger records it", "[proxy]") {
  Proxied p(Dialect::anthropic, R"({ fault = "ok" })", R"({ fault = "overloaded" })");
  const auto r = p.proxy.chat(Dialect::anthropic, "/r", true);
  CHECK(r.status == 529);
  CHECK(r.json().at("error").at("type").as_string() == "overloaded_error");
  const auto l = p.proxy.ledger("", 1);
  CHECK(l.at(0).status == 529);
  CHECK(l.at(0).upstream_status == 529);
}

TEST_CASE("credentials reach the upstream untouched and never the ledger, the admin API or the metrics",
          "[proxy]") {
  const std::string key = "sk-llmchaos-test-7f3a9c";
  OneShotUpstream raw(chunked_sse(
      {"data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hi \"}],\"role\":\"model\"}}]}\r\n\r\n",
       "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"\"}],\"role\":\"model\"},"
       "\"finishReason\":\"STOP\"}]}\r\n\r\n"}));
  const auto script =
      proxy::parse_proxy_script(script_toml(Dialect::gemini, R"({ fault = "ok" })"), "proxy.toml");
  TestServer proxy(proxy_options(script, raw.base_url()));
  proxy.engine().install("", script.script);
  const auto r =
      proxy.send("POST", "/r/v1beta/models/gemini-x:streamGenerateContent?alt=sse&key=" + key,
                 R"({"contents":[{"role":"user","parts":[{"text":"hi"}]}]})",
                 {{"Authorization", "Bearer " + key}, {"x-goog-api-key", key}, {"x-api-key", key}});
  CHECK(r.status == 200);
  CHECK(r.complete);
  CHECK(texts(Dialect::gemini, r) == std::vector<std::string>{"hi "});
  // The upstream got the path below the route and every credential as sent.
  const auto request = raw.request();
  CAPTURE(request);
  CHECK(request.rfind(
            "POST /v1beta/models/gemini-x:streamGenerateContent?alt=sse&key=" + key + " HTTP/1.1\r\n", 0) ==
        0);
  CHECK(request.find("authorization: Bearer " + key + "\r\n") != std::string::npos);
  CHECK(request.find("x-goog-api-key: " + key + "\r\n") != std::string::npos);
  CHECK(request.find("x-api-key: " + key + "\r\n") != std::string::npos);
  // Nothing the proxy writes names it.
  const auto l = proxy.ledger("", 1);
  CHECK(l.at(0).path.find("key=REDACTED") != std::string::npos);
  CHECK(ledger_to_json(proxy.engine().ledger_all()).find(key) == std::string::npos);
  CHECK(proxy.send("GET", "/__llmchaos/ledger").body.find(key) == std::string::npos);
  CHECK(proxy.send("GET", "/metrics").body.find(key) == std::string::npos);
}

TEST_CASE(
    "a stream whose upstream closes with its last bytes ends at once through the proxy, not at the read "
    "deadline",
    "[proxy]") {
  // The head, two events and the FIN in one burst (no last chunk: the stream is cut). The read that takes
  // the events finds the end queued behind them, and no later event says so: the proxy must still see it
  // (its read deadline is 300 s).
  std::string cut = chunked_sse(
      {"data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":"
       "{\"content\":\"one \"}}]}\n\n",
       "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":"
       "{\"content\":\"two \"}}]}\n\n"});
  cut.resize(cut.size() - std::string_view("0\r\n\r\n").size());
  OneShotUpstream raw(cut);
  const auto script =
      proxy::parse_proxy_script(script_toml(Dialect::openai, R"({ fault = "ok" })"), "proxy.toml");
  TestServer proxy(proxy_options(script, raw.base_url()));
  proxy.engine().install("", script.script);
  const auto t0 = std::chrono::steady_clock::now();
  const auto r = proxy.chat(Dialect::openai, "/r", true, {}, {}, 5000);
  CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3));
  CHECK_FALSE(r.timed_out);
  CHECK(r.status == 200);
  CHECK_FALSE(r.complete);
  CHECK(texts(Dialect::openai, r) == std::vector<std::string>{"one ", "two "});
  const auto l = proxy.ledger("", 1);
  REQUIRE(l.size() == 1);
  CHECK(l[0].outcome == AttemptOutcome::cut);
}

TEST_CASE(
    "an upstream that half-closes with its kept-alive answer is not asked again on that connection: the next "
    "request goes on a new one at once",
    "[proxy]") {
  // The answer's last bytes and the FIN come in one event, and the upstream still reads (a lingering
  // close), so a request sent on that connection would get no answer and no reset: the proxy must have
  // seen the FIN behind the answer (its read deadline is 300 s).
  const std::string body =
      R"({"id":"chatcmpl-l","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,)"
      R"("message":{"role":"assistant","content":"lingering"},"finish_reason":"stop"}],)"
      R"("usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}})";
  LingeringUpstream upstream(
      fmt::format("HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{}",
                  body.size(), body));
  const auto script =
      proxy::parse_proxy_script(script_toml(Dialect::openai, R"({ fault = "ok" })"), "proxy.toml");
  TestServer proxy(proxy_options(script, upstream.base_url()));
  proxy.engine().install("", script.script);
  for (int i = 0; i < 3; ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = proxy.chat(Dialect::openai, "/r", false, {}, {}, 5000);
    CHECK(std::chrono::steady_clock::now() - t0 < std::chrono::seconds(3));
    CHECK_FALSE(r.timed_out);
    CHECK(r.status == 200);
    CHECK(r.body.find("lingering") != std::string::npos);
  }
  CHECK(upstream.connections() == 3);
  CHECK(upstream.ignored() == 0);
}

TEST_CASE("an upstream that cannot be reached is a 502 naming it, and a route without one says so",
          "[proxy]") {
  std::uint16_t closed_port = 0;
  {
    TestServer gone;
    closed_port = gone.port();
  }
  const auto script =
      proxy::parse_proxy_script(script_toml(Dialect::openai, R"({ fault = "ok" })"), "proxy.toml");
  TestServer unreachable(proxy_options(script, "http://127.0.0.1:" + std::to_string(closed_port)));
  unreachable.engine().install("", script.script);
  const auto r = unreachable.chat(Dialect::openai, "/r", true);
  CHECK(r.status == 502);
  CHECK(r.body.find("127.0.0.1:" + std::to_string(closed_port)) != std::string::npos);
  CHECK(unreachable.ledger("", 1).at(0).upstream_status == 0);

  TestServer none(proxy_options(script));
  none.engine().install("", script.script);
  const auto n = none.chat(Dialect::openai, "/r", false);
  CHECK(n.status == 502);
  CHECK(n.body.find("no upstream") != std::string::npos);
}

// The read timeout (--read-timeout-ms): a plain upstream's reads are bounded by the connection's
// ReadDeadline (net/read_deadline.hpp), re-armed by every read, not by a timer per read.
TEST_CASE(
    "an upstream silent past the read timeout is cut: before its head a 502 naming the timeout, mid "
    "stream a cut; answers within it pass, one after another on the kept connection",
    "[proxy]") {
  TestServer upstream;
  upstream.install("", script_toml(Dialect::openai,
                                   R"({ fault = "ok", times = 3 },)"
                                   R"({ fault = "ok", latency_ms = 1500 },)"
                                   R"({ fault = "stream_stall", cut_after_events = 2, stall_ms = 1500 })"));
  const auto script =
      proxy::parse_proxy_script(script_toml(Dialect::openai, R"({ fault = "ok", times = 5 })"), "proxy.toml");
  auto options = proxy_options(script, upstream.server.base_url() + "/r");
  proxy::UpstreamOptions up;
  up.upstream = upstream.server.base_url() + "/r";
  up.read_timeout_ms = 300;
  up.connect_timeout_ms = 2000;
  options.forwarder = proxy::make_upstream_forwarder(up);
  TestServer proxy(options);
  proxy.engine().install("", script.script);

  for (int i = 0; i < 3; ++i) CHECK(proxy.chat(Dialect::openai, "/r", i % 2 == 1).complete);

  const auto started = std::chrono::steady_clock::now();
  const auto silent = proxy.chat(Dialect::openai, "/r", false);
  const auto waited = std::chrono::steady_clock::now() - started;
  CHECK(silent.status == 502);
  CHECK(silent.body.find("no answer") != std::string::npos);
  CHECK(silent.body.find("timeout") != std::string::npos);
  CHECK(waited >= std::chrono::milliseconds(250));
  CHECK(waited < std::chrono::milliseconds(1400));  // not the upstream's 1500 ms

  const auto stalled = proxy.chat(Dialect::openai, "/r", true);
  CHECK(stalled.status == 200);
  CHECK_FALSE(stalled.complete);
  const auto l = proxy.ledger("", 5);
  CHECK(l.at(3).upstream_status == 0);
  CHECK(l.at(4).outcome == AttemptOutcome::cut);
  CHECK(l.at(4).upstream_ms < 1400);
}

TEST_CASE(
    "the proxy keeps its upstream connection open, and one the upstream closed while idle is replaced "
    "without a failed answer",
    "[proxy]") {
  mock::ServerOptions upstream_options;
  upstream_options.idle_timeout_ms = 100;  // the upstream closes a connection idle this long
  TestServer upstream(upstream_options);
  upstream.install("", script_toml(Dialect::openai, R"({ fault = "ok", times = 5 })"));
  const auto script =
      proxy::parse_proxy_script(script_toml(Dialect::openai, R"({ fault = "ok", times = 5 })"), "proxy.toml");
  TestServer proxy(proxy_options(script, upstream.server.base_url() + "/r"));
  proxy.engine().install("", script.script);
  CHECK(proxy.chat(Dialect::openai, "/r", false).status == 200);
  CHECK(proxy.chat(Dialect::openai, "/r", true).complete);      // at once: the kept connection
  std::this_thread::sleep_for(std::chrono::milliseconds(400));  // the upstream closes it meanwhile
  const auto after_close = proxy.chat(Dialect::openai, "/r", true);
  CHECK(after_close.status == 200);
  CHECK(after_close.complete);
  CHECK(upstream.ledger("", 3).size() == 3);  // each request reached the upstream once
  // The first two shared one connection, which the upstream then closed as idle (so the third found it
  // closed).
  CHECK(upstream.engine().metrics_text().find("llmchaos_server_events_total{event=\"idle_timeout\"} 1\n") !=
        std::string::npos);
  const auto l = proxy.ledger("", 3);
  REQUIRE(l.size() == 3);
  for (const auto& e : l) CHECK(e.upstream_status == 200);
}
