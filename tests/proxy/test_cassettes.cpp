// Cassettes on loopback: `serve` as the upstream, a recording proxy in front of it, and a `serve
// --cassettes` replaying what was recorded. Replayed frames must be the recorded bytes, with the recorded
// timing within a stated tolerance; faults must apply to recorded answers as to real ones; a miss is a 501
// naming the key, or (hybrid) recorded; no file written names a credential.
#include <fmt/format.h>

#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "cli_run.hpp"
#include "llmchaos/core/eventstream.hpp"
#include "llmchaos/proxy/cassette.hpp"
#include "llmchaos/proxy/proxy.hpp"
#include "server_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::test;
namespace fs = std::filesystem;

namespace {

// Replayed frame times may differ from the recorded ones by this much (each frame's offset after the
// head, and the head's own time): the recording proxy stamps frames as they arrive, the replaying server
// schedules them on a timer, and a loaded 2-core machine adds scheduling noise (at load 11 a head came
// 80 ms late once in three runs against a 25 ms bound). The frames are 80 ms apart, so a frame replayed
// one slot early or late is still caught. The replay is measured up to three times and judged by its
// best try (a stall hits one try, a timing bug every one).
constexpr double timing_tolerance_ms = 50;

const std::string key = "sk-llmchaos-cassette-test-5e2d71";

std::string script_toml(Dialect d, const std::string& steps, const std::string& extra = {}) {
  return "[route.r]\ndialect = \"" + std::string(to_string(d)) +
         "\"\ntext = \"alpha beta gamma delta epsilon zeta\"\n" + extra + "script = [" + steps + "]\n";
}

std::vector<fs::path> cassettes_in(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (e.path().filename().string().ends_with(".cassette.json")) out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

proxy::Cassette read_cassette(const fs::path& p) {
  return proxy::parse_cassette(slurp(p), p.string());
}

// A proxy recording into `dir`, in front of `upstream_base` (the upstream's "/r").
mock::ServerOptions recording_proxy(const std::string& upstream_base, const std::string& dir) {
  proxy::UpstreamOptions up;
  up.upstream = upstream_base;
  up.record_dir = dir;
  up.connect_timeout_ms = 2000;
  mock::ServerOptions o;
  o.forwarder = proxy::make_upstream_forwarder(up);
  return o;
}

// `serve --cassettes dir` (on a miss: 501, or the upstream forwarder `on_miss`).
mock::ServerOptions replaying(const std::string& dir, std::shared_ptr<mock::Forwarder> on_miss = nullptr) {
  mock::ServerOptions o;
  o.forwarder = proxy::make_cassette_forwarder({dir, 1.0}, std::move(on_miss));
  return o;
}

void install_proxy_script(TestServer& s, Dialect d, const std::string& steps) {
  s.engine().install("", proxy::parse_proxy_script(script_toml(d, steps), "script.toml").script);
}

std::vector<std::pair<std::string, std::string>> credentials() {
  return {{"Authorization", "Bearer " + key}, {"x-api-key", key}, {"x-goog-api-key", key}, {"api-key", key}};
}

std::vector<std::string> texts(Dialect d, const WireReply& r) {
  std::vector<std::string> out;
  for (const auto& e : sse_events(r.body))
    if (auto t = event_text(d, e); !t.empty()) out.push_back(t);
  return out;
}

}  // namespace

TEST_CASE(
    "the cassette key ignores ids, member order and credentials, and tells the stream flag and the messages "
    "apart",
    "[cassette]") {
  const auto base =
      proxy::cassette_key(Dialect::openai, "POST", "/v1/chat/completions",
                          R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true})");
  CHECK(base.size() == 64);
  CHECK(
      proxy::cassette_key(
          Dialect::openai, "POST", "/v1/chat/completions",
          R"({"stream":true,"user":"u-1","metadata":{"id":"x"},"messages":[{"content":"hi","role":"user"}],"model":"m"})") ==
      base);
  CHECK(proxy::cassette_key(Dialect::openai, "POST", "/v1/chat/completions",
                            R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream":false})") !=
        base);
  CHECK(proxy::cassette_key(Dialect::openai, "POST", "/v1/chat/completions",
                            R"({"model":"m","messages":[{"role":"user","content":"ho"}],"stream":true})") !=
        base);
  CHECK(proxy::cassette_key(Dialect::anthropic, "POST", "/v1/chat/completions",
                            R"({"model":"m","messages":[{"role":"user","content":"hi"}],"stream":true})") !=
        base);
  // Gemini: the key= parameter is a credential, alt=sse shapes the answer.
  const auto g = proxy::cassette_key(Dialect::gemini, "POST",
                                     "/v1beta/models/g:streamGenerateContent?alt=sse&key=A", "{}");
  CHECK(proxy::cassette_key(Dialect::gemini, "POST", "/v1beta/models/g:streamGenerateContent?key=B&alt=sse",
                            "{}") == g);
  CHECK(proxy::cassette_key(Dialect::gemini, "POST", "/v1beta/models/g:streamGenerateContent?alt=sse&KEY=C",
                            "{}") == g);
  CHECK(proxy::cassette_key(Dialect::gemini, "POST", "/v1beta/models/g:streamGenerateContent", "{}") != g);
  // A body that is not JSON still has a key (the whole body).
  CHECK(proxy::cassette_key(Dialect::openai, "POST", "/x", "not json") !=
        proxy::cassette_key(Dialect::openai, "POST", "/x", "not json!"));
}

TEST_CASE("a cassette written is read back as it was", "[cassette]") {
  proxy::Cassette c;
  c.dialect = Dialect::anthropic;
  c.path = "/v1/messages";
  c.request_body = R"({"model":"claude-x","stream":true})";
  c.key = proxy::cassette_key(c.dialect, c.method, c.path, c.request_body);
  c.request_headers = {{"content-type", "application/json"}};
  c.headers = {{"content-type", "text/event-stream"}, {"request-id", "req_1"}};
  c.head_ms = 1.5;
  c.streamed = true;
  c.frames = {{0.25, "event: message_start\ndata: {\"a\":\"\\u00e9\\n\"}\n\n"},
              {30.125, "event: message_stop\r\ndata: {}\r\n\r\n"}};
  c.end_ms = 31;
  const auto back = proxy::parse_cassette(proxy::cassette_json(c), "c.json");
  CHECK(back.key == c.key);
  CHECK(back.dialect == c.dialect);
  CHECK(back.request_headers == c.request_headers);
  CHECK(back.headers == c.headers);
  REQUIRE(back.frames.size() == 2);
  CHECK(back.frames[0].bytes == c.frames[0].bytes);
  CHECK(back.frames[1].bytes == c.frames[1].bytes);
  CHECK(back.frames[1].at_ms == 30.125);
  CHECK(back.end_ms == 31);
}

TEST_CASE("a bedrock cassette keeps its binary frames as base64 and reads them back byte for byte",
          "[cassette]") {
  proxy::Cassette c;
  c.dialect = Dialect::bedrock;
  c.path = "/model/m/converse-stream";
  c.key = proxy::cassette_key(c.dialect, c.method, c.path, c.request_body);
  c.headers = {{"content-type", "application/vnd.amazon.eventstream"}};
  c.streamed = true;
  c.frames = {
      {0.5, eventstream::encode(eventstream::event("contentBlockDelta", R"({"delta":{"text":"hi"}})"))},
      {2, eventstream::encode(eventstream::event("messageStop", R"({"stopReason":"end_turn"})"))}};
  const auto text = proxy::cassette_json(c);
  CHECK(text.find("bytes_base64") != std::string::npos);
  const auto back = proxy::parse_cassette(text, "c.json");
  REQUIRE(back.frames.size() == 2);
  CHECK(back.frames[0].bytes == c.frames[0].bytes);
  CHECK(back.frames[1].bytes == c.frames[1].bytes);
  auto broken = text;
  broken.replace(broken.find("bytes_base64\": \"") + 16, 1, "*");
  try {
    (void)proxy::parse_cassette(broken, "c.json");
    FAIL("a frame that is not base64 was read");
  } catch (const SpecError& e) {
    CHECK(std::string(e.what()).find("bytes_base64: expected base64") != std::string::npos);
  }
}

TEST_CASE("a broken cassette is refused with file:line:col, and hostile input never crashes", "[cassette]") {
  const auto error_of = [](const std::string& text) {
    try {
      proxy::parse_cassette(text, "c.json");
    } catch (const SpecErrors& e) {
      return std::string(e.all().front().what());
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error_of("{\n  \"format\": 1,\n  \"key\": }") == "c.json:3:10: invalid JSON: syntax error");
  CHECK(error_of("{\"format\": 2}")
            .find("c.json:1:2: format: this llmchaos reads cassette format 1, the file has 2") == 0);
  CHECK(error_of("{\"format\": 1}").find("missing the member \"key\"") != std::string::npos);
  CHECK(error_of("[1]") == "c.json:1:1: a cassette is a JSON object");
  CHECK(error_of("").find("c.json:1:1: invalid JSON") == 0);
  CHECK(error_of("{\"format\": 1, \"key\":").find("c.json:1:") == 0);
  CHECK(error_of("{} x") == "c.json:1:4: invalid JSON: text after the cassette's object");
  CHECK(error_of(std::string(200000, '[')).find("c.json:1:33: invalid JSON: too deep") == 0);
  CHECK(error_of(std::string("\xff\xfe\x00{", 4)).find("c.json:1:1: invalid JSON") == 0);
  CHECK(error_of(std::string(proxy::cassette_size_limit + 1, ' ')).find("larger than the limit") !=
        std::string::npos);
  proxy::Cassette c;
  c.key = "k";
  auto text = proxy::cassette_json(c);
  text.replace(text.find("\"status\": 200"), 13, "\"status\": \"ok\"");
  CHECK(error_of(text).find("response.status: expected an HTTP status") != std::string::npos);
}

TEST_CASE(
    "recording then replaying the healthy answers gives byte-identical frames and the recorded timing within "
    "50 ms",
    "[cassette]") {
  const auto d = GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses,
                          Dialect::azure, Dialect::bedrock);
  const bool stream = GENERATE(true, false);
  CAPTURE(to_string(d), stream);
  TempDir recorded("cassette-rec");

  // serve (healthy, 80 ms between events) <- proxy --record recorded
  TestServer upstream;
  upstream.install("", script_toml(d, R"({ fault = "ok", inter_event_ms = 80, latency_ms = 20 })"));
  TestServer proxy(recording_proxy(upstream.server.base_url() + "/r", recorded.path.string()));
  install_proxy_script(proxy, d, R"({ fault = "ok" })");
  const auto live = proxy.chat(d, "/r", stream, {}, credentials());
  REQUIRE(live.status == 200);
  REQUIRE(live.complete);
  REQUIRE(proxy.ledger("", 1).size() == 1);  // finished: the cassette is written before the entry finishes
  const auto files = cassettes_in(recorded.path);
  REQUIRE(files.size() == 1);
  const auto rec = read_cassette(files[0]);
  CHECK(proxy::lint_cassette_file(files[0].string()).empty());

  // serve --cassettes recorded <- proxy --record rerecorded: the replay as a client sees it, stamped the same
  // way.
  TestServer replay(replaying(recorded.path.string()));
  install_proxy_script(replay, d, R"({ fault = "ok" })");
  // The timing is measured up to three times: a replay that ignores or shifts the recorded timing is off
  // on every try, a scheduling stall of a loaded machine on one of them only.
  double worst_ms = 0;
  for (int attempt = 1; attempt <= 3; ++attempt) {
    CAPTURE(attempt);
    TempDir rerecorded("cassette-rerec");
    TestServer proxy2(recording_proxy(replay.server.base_url() + "/r", rerecorded.path.string()));
    install_proxy_script(proxy2, d, R"({ fault = "ok" })");
    const auto replayed = proxy2.chat(d, "/r", stream, {}, credentials());
    REQUIRE(replayed.status == 200);
    REQUIRE(replayed.complete);
    CHECK(replayed.body == live.body);  // byte-identical, ids included
    REQUIRE(proxy2.ledger("", 1).size() == 1);
    const auto files2 = cassettes_in(rerecorded.path);
    REQUIRE(files2.size() == 1);
    CHECK(files2[0].filename() == files[0].filename());  // the same request, the same key
    const auto again = read_cassette(files2[0]);
    CHECK(again.streamed == stream);
    CHECK(again.body == rec.body);
    REQUIRE(again.frames.size() == rec.frames.size());
    worst_ms = std::abs(again.head_ms - rec.head_ms);
    for (std::size_t i = 0; i < rec.frames.size(); ++i) {
      CHECK(again.frames[i].bytes == rec.frames[i].bytes);
      worst_ms = std::max(worst_ms, std::abs(again.frames[i].at_ms - rec.frames[i].at_ms));
    }
    if (worst_ms <= timing_tolerance_ms) break;
    WARN("replayed timing off by " << worst_ms << " ms on try " << attempt << ": measured again");
  }
  CHECK(worst_ms <= timing_tolerance_ms);
  if (stream) CHECK(rec.frames.back().at_ms >= 80 * 5);  // the six events really were spread out
}

TEST_CASE("every stream fault applies to a replayed answer as it does through the proxy to the real one",
          "[cassette]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  const std::string step =
      GENERATE(std::string(R"({ fault = "stream_cut", cut_after_events = 3 })"),
               std::string(R"({ fault = "stream_error", cut_after_events = 2 })"),
               std::string(R"({ fault = "malformed_event", cut_after_events = 1 })"),
               std::string(R"({ fault = "no_terminator" })"),
               std::string(R"({ fault = "stream_stall", cut_after_events = 1, stall_ms = 30 })"));
  CAPTURE(to_string(d), step);
  TempDir dir("cassette-faults");
  TestServer upstream;
  upstream.install("", script_toml(d, R"({ fault = "ok", times = 2 })"));
  // The proxy records the healthy answer, then applies the fault to the real one.
  TestServer proxy(recording_proxy(upstream.server.base_url() + "/r", dir.path.string()));
  install_proxy_script(proxy, d, R"({ fault = "ok" }, )" + step);
  REQUIRE(proxy.chat(d, "/r", true).complete);
  const auto via_proxy = proxy.chat(d, "/r", true);
  proxy.ledger("", 2);
  REQUIRE(cassettes_in(dir.path).size() == 1);

  TestServer replay(replaying(dir.path.string()));
  install_proxy_script(replay, d, step);
  const auto via_replay = replay.chat(d, "/r", true);
  CHECK(via_replay.status == via_proxy.status);
  CHECK(via_replay.complete == via_proxy.complete);
  CHECK(texts(d, via_replay) == texts(d, via_proxy));
  const auto a = proxy.ledger("", 2).at(1), b = replay.ledger("", 1).at(0);
  CHECK(b.fault == a.fault);
  CHECK(b.outcome == a.outcome);
  CHECK(b.events_sent == a.events_sent);
  CHECK(b.committed == a.committed);
  if (step.find("stream_cut") != std::string::npos) CHECK(texts(d, via_replay).size() == 3);
}

TEST_CASE(
    "faults before the answer are the mock's own with cassettes, and a miss is a 501 naming the request's "
    "key",
    "[cassette]") {
  TempDir dir("cassette-miss");
  TestServer replay(replaying(dir.path.string()));
  install_proxy_script(replay, Dialect::openai, R"({ fault = "rate_429" }, { fault = "ok" })");
  CHECK(replay.chat(Dialect::openai, "/r", true).status == 429);
  const auto miss = replay.chat(Dialect::openai, "/r", true);
  const auto call = chat_call(Dialect::openai, "/r", true);
  const auto expected = proxy::cassette_key(Dialect::openai, "POST", "/v1/chat/completions", call.body);
  CHECK(miss.status == 501);
  CHECK(miss.header("x-llmchaos-cassette") == expected);
  CHECK(miss.json().at("error").at("message").as_string().find("no cassette for this request: key " +
                                                               expected) == 0);
  CHECK(miss.json().at("error").at("code").as_string() == "llmchaos_cassette_miss");
  CHECK(replay.ledger("", 2).at(1).status == 501);
}

TEST_CASE(
    "on-miss upstream forwards a missing request, records it, and replays it next time without the upstream",
    "[cassette]") {
  const auto d = GENERATE(Dialect::openai, Dialect::gemini);
  CAPTURE(to_string(d));
  TempDir dir("cassette-hybrid");
  TestServer upstream;
  upstream.install("", script_toml(d, R"({ fault = "ok" })"));
  proxy::UpstreamOptions up;
  up.upstream = upstream.server.base_url() + "/r";
  up.record_dir = dir.path.string();
  TestServer hybrid(replaying(dir.path.string(), proxy::make_upstream_forwarder(up)));
  install_proxy_script(hybrid, d, R"({ fault = "ok", times = 2 })");
  const auto first = hybrid.chat(d, "/r", true, {}, credentials());
  CHECK(first.complete);
  hybrid.ledger("", 1);
  CHECK(cassettes_in(dir.path).size() == 1);
  CHECK(upstream.ledger("", 1).size() == 1);
  const auto second = hybrid.chat(d, "/r", true, {}, credentials());
  CHECK(second.body == first.body);
  hybrid.ledger("", 2);
  CHECK(upstream.engine().ledger("").size() == 1);  // the second came from the cassette
  const auto l = hybrid.ledger("", 2);
  CHECK(l.at(0).forwarded);
  CHECK_FALSE(l.at(1).forwarded);
}

TEST_CASE("no file the recording writes names a credential: headers, the query key and the ledger",
          "[cassette]") {
  TempDir dir("cassette-secrets");
  for (const auto d : {Dialect::openai, Dialect::anthropic, Dialect::gemini}) {
    TestServer upstream;
    upstream.install("", script_toml(d, R"({ fault = "ok" })"));
    TestServer proxy(recording_proxy(upstream.server.base_url() + "/r", dir.path.string()));
    install_proxy_script(proxy, d, R"({ fault = "ok" })");
    auto call = chat_call(d, "/r", true);
    call.target += (call.target.find('?') == std::string::npos ? "?key=" : "&key=") + key;
    const auto r = proxy.send("POST", call.target, call.body, credentials());
    CHECK(r.complete);
    proxy.ledger("", 1);
    std::ofstream(dir.path / (std::string(to_string(d)) + "-ledger.json"))
        << proxy.send("GET", "/__llmchaos/ledger").body << proxy.send("GET", "/metrics").body;
  }
  int files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir.path)) {
    if (!e.is_regular_file()) continue;
    ++files;
    CAPTURE(e.path().string());
    CHECK(slurp(e.path()).find(key) == std::string::npos);
  }
  CHECK(files == 6);  // 3 cassettes, 3 ledgers
  for (const auto& c : cassettes_in(dir.path)) CHECK(slurp(c).find("key=REDACTED") != std::string::npos);
}
