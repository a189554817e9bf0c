// Background responses (Responses API) through `llmchaos proxy` and `serve --cassettes`: a create cut by
// the proxy and resumed through it, faults on the resume, and a recorded create and resume replayed.
// (The mock's own background responses: tests/mockprovider/test_resume.cpp.) Loopback, port 0.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <filesystem>

#include "cli_run.hpp"
#include "llmchaos/proxy/cassette.hpp"
#include "llmchaos/proxy/proxy.hpp"
#include "responses_frames.hpp"
#include "server_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::test;

namespace {

// `llmchaos proxy` (the upstream forwarder, recording into `record_dir` when given) or `serve --cassettes
// dir`, each with `steps` on route r of the responses dialect.
mock::ServerOptions proxy_to(const std::string& upstream, const std::string& record_dir = {}) {
  proxy::UpstreamOptions up;
  up.upstream = upstream;
  up.record_dir = record_dir;
  up.connect_timeout_ms = 2000;
  mock::ServerOptions o;
  o.forwarder = proxy::make_upstream_forwarder(up);
  return o;
}
mock::ServerOptions cassettes_in(const std::string& dir) {
  mock::ServerOptions o;
  o.forwarder = proxy::make_cassette_forwarder({dir, 1.0}, nullptr);
  return o;
}
void install_proxied(TestServer& s, const std::string& steps) {
  s.engine().install("",
                     proxy::parse_proxy_script(route_toml(Dialect::responses, steps), "proxy.toml").script);
}

}  // namespace

TEST_CASE(
    "a background response created through the proxy, cut there and resumed through it: the upstream "
    "re-serves the frames after N and the proxy ledgers the resume",
    "[resume][proxy]") {
  TestServer upstream;  // `serve`: stores the background response, healthy
  upstream.install("", route_toml(Dialect::responses, R"({ fault = "ok" })"));
  // One attempt on the upstream first, so its ids (resp_2, ...) are not the proxy's own numbers.
  REQUIRE(upstream.send("POST", "/r/v1/responses", R"({"model":"m","input":"hi"})").status == 200);
  TestServer proxy(proxy_to(upstream.server.base_url() + "/r"));
  install_proxied(proxy, R"({ fault = "stream_cut", cut_after_events = 2 }, { fault = "ok" })");

  const auto cut = proxy.send("POST", "/r/v1/responses", create_stream);
  CHECK(cut.status == 200);
  CHECK_FALSE(cut.complete);
  const auto first = frames(cut.body);
  REQUIRE(first.size() >= 3);
  CHECK(deltas(first) == "alpha beta ");
  const std::string id(first.front().data.at("response").at("id").as_string());
  CHECK(id == "resp_2");  // the upstream's id
  const long long last = first.back().sequence;

  const auto resumed = proxy.send("GET", resume_target(id, last));
  CHECK(resumed.status == 200);
  CHECK(resumed.complete);
  const auto rest = frames(resumed.body);
  REQUIRE_FALSE(rest.empty());
  CHECK(rest.front().sequence == last + 1);
  CHECK(deltas(first) + deltas(rest) == "alpha beta gamma delta");
  CHECK(rest.back().type == "response.completed");
  // The bytes are the upstream's own resume, untouched (read again from it directly).
  CHECK(resumed.body == upstream.send("GET", resume_target(id, last)).body);

  const auto l = proxy.ledger("", 2);
  REQUIRE(l.size() == 2);
  CHECK(l[0].background);
  CHECK(l[0].forwarded);
  CHECK(l[0].outcome == AttemptOutcome::cut);
  CHECK(l[0].events_sent == 2);
  CHECK(l[1].resume_of == l[0].seq);
  CHECK(l[1].starting_after == last);
  CHECK(l[1].attempt == 1);
  CHECK(l[1].stream);
  CHECK(l[1].model == "m");
  CHECK(l[1].path == "/v1/responses/" + id + "?stream=true&starting_after=" + std::to_string(last));
  CHECK(l[1].fault == FaultKind::ok);
  CHECK(l[1].forwarded);
  CHECK(l[1].upstream_status == 200);
  CHECK(l[1].outcome == AttemptOutcome::completed);
  CHECK(l[1].events_sent == 2);
  const auto up = upstream.ledger("", 4);
  REQUIRE(up.size() == 4);
  CHECK(up[2].resume_of == up[1].seq);  // the upstream saw the resume as its own
  CHECK(up[2].starting_after == last);

  // The retrieve without stream is forwarded too: the stored object.
  const auto object = proxy.send("GET", "/r/v1/responses/" + id);
  CHECK(object.status == 200);
  CHECK(object.json().at("status").as_string() == "completed");
  const auto l3 = proxy.ledger("", 3);
  REQUIRE(l3.size() == 3);
  CHECK(l3[2].resume_of == l[0].seq);
  CHECK(l3[2].starting_after == -1);
  CHECK(l3[2].forwarded);
}

TEST_CASE(
    "faults apply to a resume through the proxy: a stream_cut counts the resume's own deltas, an error is "
    "the proxy's and never reaches the upstream",
    "[resume][proxy]") {
  TestServer upstream;
  upstream.install("", route_toml(Dialect::responses, R"({ fault = "ok" })"));
  TestServer proxy(proxy_to(upstream.server.base_url() + "/r"));
  install_proxied(
      proxy,
      R"({ fault = "stream_cut", cut_after_events = 1 }, { fault = "stream_cut", cut_after_events = 1 },
                            { fault = "server_500" })");
  const auto first = frames(proxy.send("POST", "/r/v1/responses", create_stream).body);
  REQUIRE_FALSE(first.empty());
  const std::string id(first.front().data.at("response").at("id").as_string());
  const auto again = proxy.send("GET", resume_target(id, first.back().sequence));
  CHECK(again.status == 200);
  CHECK_FALSE(again.complete);
  const auto second = frames(again.body);
  CHECK(deltas(second) == "beta ");
  REQUIRE_FALSE(second.empty());
  CHECK(second.front().sequence == first.back().sequence + 1);
  CHECK(proxy.send("GET", resume_target(id, second.back().sequence)).status == 500);
  const auto l = proxy.ledger("", 3);
  REQUIRE(l.size() == 3);
  CHECK(l[1].fault == FaultKind::stream_cut);
  CHECK(l[1].outcome == AttemptOutcome::cut);
  CHECK(l[1].events_sent == 1);
  CHECK(l[1].resume_of == l[0].seq);
  CHECK(l[2].fault == FaultKind::server_500);
  CHECK(l[2].resume_of == l[0].seq);
  CHECK_FALSE(l[2].forwarded);
  CHECK(upstream.ledger("", 2).size() == 2);  // the create and the first resume
}

TEST_CASE(
    "proxy --record records a background create and its resume, and serve --cassettes replays the resume of "
    "a replayed cut",
    "[resume][cassette]") {
  TempDir dir("resume-cassettes");
  TestServer upstream;
  upstream.install("", route_toml(Dialect::responses, R"({ fault = "ok" })"));
  long long after = -1;
  std::string id, recorded_resume;
  {
    TestServer recorder(proxy_to(upstream.server.base_url() + "/r", dir.path.string()));
    install_proxied(recorder, R"({ fault = "ok" })");
    const auto whole = frames(recorder.send("POST", "/r/v1/responses", create_stream).body);
    REQUIRE_FALSE(whole.empty());
    id = std::string(whole.front().data.at("response").at("id").as_string());
    for (const auto& f : whole)  // the sequence of the second delta: where a cut after 2 leaves off
      if (f.type == "response.output_text.delta" && f.delta == "beta ") after = f.sequence;
    REQUIRE(after > 0);
    const auto resume = recorder.send("GET", resume_target(id, after));
    REQUIRE(resume.complete);
    recorded_resume = resume.body;
    recorder.ledger("", 2);
  }
  int cassettes = 0, gets = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path)) {
    ++cassettes;
    CHECK(proxy::lint_cassette_file(e.path().string()).empty());
    gets += proxy::parse_cassette(slurp(e.path()), e.path().string()).method == "GET" ? 1 : 0;
  }
  CHECK(cassettes == 2);
  CHECK(gets == 1);

  TestServer replay(cassettes_in(dir.path.string()));
  install_proxied(replay, R"({ fault = "stream_cut", cut_after_events = 2 }, { fault = "ok" })");
  const auto cut = frames(replay.send("POST", "/r/v1/responses", create_stream).body);
  REQUIRE_FALSE(cut.empty());
  CHECK(deltas(cut) == "alpha beta ");
  CHECK(cut.back().sequence == after);
  const auto resumed = replay.send("GET", resume_target(id, after));
  CHECK(resumed.status == 200);
  CHECK(resumed.complete);
  CHECK(resumed.body == recorded_resume);
  CHECK(deltas(cut) + deltas(frames(resumed.body)) == "alpha beta gamma delta");
  const auto l = replay.ledger("", 2);
  REQUIRE(l.size() == 2);
  CHECK(l[1].resume_of == l[0].seq);
  CHECK(l[1].starting_after == after);
  CHECK(l[1].outcome == AttemptOutcome::completed);
}
