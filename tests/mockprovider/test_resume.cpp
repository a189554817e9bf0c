// Background responses on the Responses dialect (SPEC 3 rule 0): a `background: true` request stores its
// response; GET /v1/responses/{id}?stream=true&starting_after=N re-serves its frames from sequence N+1 as
// an attempt of its own (ledgered with resume_of / starting_after, scriptable like any attempt);
// GET without stream returns the stored object; an unknown id is OpenAI's 404. Loopback, port 0.
#include <catch2/catch.hpp>

#include <boost/json.hpp>

#include "cli_run.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/mockprovider/cassette.hpp"
#include "llmchaos/mockprovider/engine.hpp"
#include "llmchaos/mockprovider/proxy.hpp"
#include "server_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::test;
namespace json = boost::json;

namespace {

constexpr const char* create_stream = R"({"model":"m","input":"hi","stream":true,"background":true})";

struct Frame {
  std::string type;
  long long sequence = -1;
  std::string delta;
  json::value data;
};

// The typed SSE frames of a body ("event: T\ndata: {...}\n\n").
std::vector<Frame> frames(const std::string& body) {
  std::vector<Frame> out;
  for (std::size_t at = body.find("data: "); at != std::string::npos; at = body.find("data: ", at)) {
    const auto end = body.find('\n', at);
    boost::system::error_code ec;
    auto v = json::parse(body.substr(at + 6, end - at - 6), ec);
    at = end;
    if (ec || !v.is_object()) continue;
    Frame f;
    f.type = std::string(v.at("type").as_string());
    f.sequence = v.at("sequence_number").to_number<long long>();
    if (const auto* d = v.as_object().if_contains("delta"); d && d->is_string()) f.delta = std::string(d->as_string());
    f.data = std::move(v);
    out.push_back(std::move(f));
  }
  return out;
}

std::string deltas(const std::vector<Frame>& fs) {
  std::string out;
  for (const auto& f : fs)
    if (f.type == "response.output_text.delta") out += f.delta;
  return out;
}

std::string resume_target(const std::string& id, long long after) {
  return "/r/v1/responses/" + id + "?stream=true&starting_after=" + std::to_string(after);
}

// `llmchaos proxy` (the upstream forwarder, recording into `record_dir` when given) or `serve --cassettes
// dir`, each with `steps` on route r of the responses dialect.
mock::ServerOptions proxy_to(const std::string& upstream, const std::string& record_dir = {}) {
  mock::UpstreamOptions up;
  up.upstream = upstream;
  up.record_dir = record_dir;
  up.connect_timeout_ms = 2000;
  mock::ServerOptions o;
  o.forwarder = mock::make_upstream_forwarder(up);
  return o;
}
mock::ServerOptions cassettes_in(const std::string& dir) {
  mock::ServerOptions o;
  o.forwarder = mock::make_cassette_forwarder({dir, 1.0}, nullptr);
  return o;
}
void install_proxied(TestServer& s, const std::string& steps) {
  s.engine().install("", mock::parse_proxy_script(route_toml(Dialect::responses, steps), "proxy.toml").script);
}

}  // namespace

TEST_CASE("a cut background stream is re-served from sequence N+1 to response.completed by the resume GET", "[resume]") {
  TestServer s;
  s.install("", route_toml(Dialect::responses, R"({ fault = "stream_cut", cut_after_events = 2 })"));
  const auto cut = s.send("POST", "/r/v1/responses", create_stream);
  const auto first = frames(cut.body);
  REQUIRE(first.size() >= 3);
  CHECK(first.front().type == "response.created");
  CHECK(first.front().data.at("response").at("background").as_bool());
  CHECK(deltas(first) == "alpha beta ");
  CHECK(first.back().type == "response.output_text.delta");
  const std::string id(first.front().data.at("response").at("id").as_string());
  const long long last = first.back().sequence;

  const auto resumed = s.send("GET", "/r/v1/responses/" + id + "?stream=true&starting_after=" + std::to_string(last));
  CHECK(resumed.status == 200);
  CHECK(resumed.complete);
  const auto rest = frames(resumed.body);
  REQUIRE_FALSE(rest.empty());
  for (std::size_t i = 0; i < rest.size(); ++i) CHECK(rest[i].sequence == last + 1 + static_cast<long long>(i));
  CHECK(deltas(rest) == "gamma delta");
  CHECK(deltas(first) + deltas(rest) == "alpha beta gamma delta");
  CHECK(rest.back().type == "response.completed");
  CHECK(std::string(rest.back().data.at("response").at("status").as_string()) == "completed");

  const auto ledger = s.ledger("", 2);
  REQUIRE(ledger.size() == 2);
  CHECK(ledger[0].background);
  CHECK(ledger[0].resume_of == 0);
  CHECK(ledger[0].outcome == AttemptOutcome::cut);
  CHECK(ledger[1].resume_of == ledger[0].seq);
  CHECK(ledger[1].starting_after == last);
  CHECK(ledger[1].attempt == 1);  // an attempt of the route like any other
  CHECK(ledger[1].stream);
  CHECK(ledger[1].events_sent == 2);
  CHECK(ledger[1].outcome == AttemptOutcome::completed);
  // The JSON of the ledger carries the resume fields, and reads back.
  const auto back = ledger_from_json(ledger_to_json(ledger));
  CHECK(back[1].resume_of == ledger[0].seq);
  CHECK(back[1].starting_after == last);
  CHECK(back[0].background);
  CHECK(back[0].starting_after == -1);
}

TEST_CASE("the resume is an attempt the script faults: a stream_cut on it counts the resume's own deltas", "[resume]") {
  TestServer s;
  s.install("", route_toml(Dialect::responses,
                           R"({ fault = "stream_cut", cut_after_events = 1 }, { fault = "stream_cut", cut_after_events = 1 },
                              { fault = "server_500" })"));
  const auto first = frames(s.send("POST", "/r/v1/responses", create_stream).body);
  REQUIRE_FALSE(first.empty());
  const std::string id(first.front().data.at("response").at("id").as_string());
  const auto again = s.send("GET", "/r/v1/responses/" + id + "?stream=true&starting_after=" + std::to_string(first.back().sequence));
  CHECK(again.status == 200);
  CHECK_FALSE(again.complete);  // cut again, mid body
  const auto second = frames(again.body);
  CHECK(deltas(second) == "beta ");
  REQUIRE_FALSE(second.empty());
  CHECK(second.front().sequence == first.back().sequence + 1);
  const auto failed = s.send("GET", "/r/v1/responses/" + id + "?stream=true&starting_after=" + std::to_string(second.back().sequence));
  CHECK(failed.status == 500);
  const auto ledger = s.ledger("", 3);
  REQUIRE(ledger.size() == 3);
  CHECK(ledger[1].fault == FaultKind::stream_cut);
  CHECK(ledger[2].fault == FaultKind::server_500);
  CHECK(ledger[2].resume_of == ledger[0].seq);
}

TEST_CASE("GET of a stored background response without stream returns the completed object", "[resume]") {
  TestServer s;
  s.install("", route_toml(Dialect::responses, R"({ fault = "stream_cut", cut_after_events = 1 })"));
  const auto first = frames(s.send("POST", "/r/v1/responses", create_stream).body);
  REQUIRE_FALSE(first.empty());
  const std::string id(first.front().data.at("response").at("id").as_string());
  const auto got = s.send("GET", "/r/v1/responses/" + id);
  REQUIRE(got.status == 200);
  const auto o = got.json();
  CHECK(o.at("id").as_string() == id);
  CHECK(o.at("status").as_string() == "completed");
  CHECK(o.at("background").as_bool());
  CHECK(o.at("output").at(0).at("content").at(0).at("text").as_string() == "alpha beta gamma delta");
  const auto ledger = s.ledger("", 2);
  REQUIRE(ledger.size() == 2);
  CHECK(ledger[1].resume_of == ledger[0].seq);
  CHECK(ledger[1].starting_after == -1);
  CHECK_FALSE(ledger[1].stream);
}

TEST_CASE("a retrieve of an unknown id is a 404 in OpenAI's error shape, and bad ids and parameters never crash", "[resume]") {
  TestServer s;
  s.install("", route_toml(Dialect::responses, R"({ fault = "ok" })"));
  const auto missing = s.send("GET", "/r/v1/responses/resp_424242?stream=true&starting_after=3");
  CHECK(missing.status == 404);
  const auto e = missing.json().at("error");
  CHECK(e.at("message").as_string() == "Response with id 'resp_424242' not found.");
  CHECK(e.at("type").as_string() == "invalid_request_error");
  CHECK(e.at("code").is_null());
  // A request that was not background stores nothing.
  const auto plain = s.send("POST", "/r/v1/responses", R"({"model":"m","input":"hi"})");
  REQUIRE(plain.status == 200);
  const std::string id(plain.json().at("id").as_string());
  CHECK_FALSE(plain.json().at("background").as_bool());
  CHECK(s.send("GET", "/r/v1/responses/" + id).status == 404);
  // Bad parameters: 400; a bad id: the unknown URL; another method on a stored id: 405.
  for (const char* q : {"?starting_after=-1", "?starting_after=abc", "?starting_after=99999999999999999999999",
                        "?starting_after="})
    CHECK(s.send("GET", "/r/v1/responses/resp_1" + std::string(q)).status == 400);
  CHECK(s.send("GET", "/r/v1/responses/" + std::string(300, 'x')).status == 404);
  CHECK(s.send("GET", "/r/v1/responses/a%20b").status == 404);
  CHECK(s.send("GET", "/r/v1/responses/").status == 404);
  CHECK(s.send("DELETE", "/r/v1/responses/resp_1").status == 405);
  // A starting_after past the end re-serves nothing and ends cleanly.
  const auto bg = frames(s.send("POST", "/r/v1/responses", create_stream).body);
  REQUIRE_FALSE(bg.empty());
  const std::string bg_id(bg.front().data.at("response").at("id").as_string());
  const auto past = s.send("GET", "/r/v1/responses/" + bg_id + "?stream=true&starting_after=1000000");
  CHECK(past.status == 200);
  CHECK(past.complete);
  CHECK(frames(past.body).empty());
}

TEST_CASE("the store of background responses is bounded per namespace: the oldest is forgotten", "[resume]") {
  ManualClock clock;
  mock::Engine engine(clock);
  engine.install("", mock::parse_script_text(route_toml(Dialect::responses, "", "then = \"ok\"\n"), "test.toml"));
  auto post = [&] {
    mock::IncomingRequest in;
    in.route = "r";
    in.path = "/v1/responses";
    in.body = R"({"model":"m","input":"hi","background":true})";
    const auto p = engine.begin(in);
    engine.finish(p.seq, AttemptOutcome::completed, 0, p.plan.status);
    return std::string(json::parse(p.plan.body).at("id").as_string());
  };
  auto get_status = [&](const std::string& id) {
    mock::IncomingRequest in;
    in.route = "r";
    in.method = "GET";
    in.path = "/v1/responses/" + id;
    const auto p = engine.begin(in);
    engine.finish(p.seq, AttemptOutcome::completed, 0, p.plan.status);
    return p.plan.status;
  };
  const auto oldest = post();
  std::string newest;
  for (int i = 0; i < 1024; ++i) newest = post();
  CHECK(get_status(oldest) == 404);
  CHECK(get_status(newest) == 200);
  engine.reset("");
  CHECK(get_status(newest) == 404);  // a reset forgets the stored responses with the ledger
}

TEST_CASE("a background response created through the proxy, cut there and resumed through it: the upstream re-serves the frames after N and the proxy ledgers the resume",
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

TEST_CASE("faults apply to a resume through the proxy: a stream_cut counts the resume's own deltas, an error is the proxy's and never reaches the upstream",
          "[resume][proxy]") {
  TestServer upstream;
  upstream.install("", route_toml(Dialect::responses, R"({ fault = "ok" })"));
  TestServer proxy(proxy_to(upstream.server.base_url() + "/r"));
  install_proxied(proxy, R"({ fault = "stream_cut", cut_after_events = 1 }, { fault = "stream_cut", cut_after_events = 1 },
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

TEST_CASE("proxy --record records a background create and its resume, and serve --cassettes replays the resume of a replayed cut",
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
    CHECK(mock::lint_cassette_file(e.path().string()).empty());
    gets += mock::parse_cassette(slurp(e.path()), e.path().string()).method == "GET" ? 1 : 0;
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
