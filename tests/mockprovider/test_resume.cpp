// Background responses on the Responses dialect (SPEC 3 rule 0): a `background: true` request stores its
// response; GET /v1/responses/{id}?stream=true&starting_after=N re-serves its frames from sequence N+1 as
// an attempt of its own (ledgered with resume_of / starting_after, scriptable like any attempt);
// GET without stream returns the stored object; an unknown id is OpenAI's 404. Loopback, port 0.
// (Through `llmchaos proxy` and `serve --cassettes`: tests/proxy/test_resume_forwarded.cpp.)
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "cli_run.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/mockprovider/engine.hpp"
#include "responses_frames.hpp"
#include "server_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::test;
namespace json = boost::json;

TEST_CASE("a cut background stream is re-served from sequence N+1 to response.completed by the resume GET",
          "[resume]") {
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

  const auto resumed =
      s.send("GET", "/r/v1/responses/" + id + "?stream=true&starting_after=" + std::to_string(last));
  CHECK(resumed.status == 200);
  CHECK(resumed.complete);
  const auto rest = frames(resumed.body);
  REQUIRE_FALSE(rest.empty());
  for (std::size_t i = 0; i < rest.size(); ++i)
    CHECK(rest[i].sequence == last + 1 + static_cast<long long>(i));
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

TEST_CASE("the resume is an attempt the script faults: a stream_cut on it counts the resume's own deltas",
          "[resume]") {
  TestServer s;
  s.install(
      "",
      route_toml(
          Dialect::responses,
          R"({ fault = "stream_cut", cut_after_events = 1 }, { fault = "stream_cut", cut_after_events = 1 },
                              { fault = "server_500" })"));
  const auto first = frames(s.send("POST", "/r/v1/responses", create_stream).body);
  REQUIRE_FALSE(first.empty());
  const std::string id(first.front().data.at("response").at("id").as_string());
  const auto again = s.send("GET", "/r/v1/responses/" + id + "?stream=true&starting_after=" +
                                       std::to_string(first.back().sequence));
  CHECK(again.status == 200);
  CHECK_FALSE(again.complete);  // cut again, mid body
  const auto second = frames(again.body);
  CHECK(deltas(second) == "beta ");
  REQUIRE_FALSE(second.empty());
  CHECK(second.front().sequence == first.back().sequence + 1);
  const auto failed = s.send("GET", "/r/v1/responses/" + id + "?stream=true&starting_after=" +
                                        std::to_string(second.back().sequence));
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

TEST_CASE(
    "a retrieve of an unknown id is a 404 in OpenAI's error shape, and bad ids and parameters never crash",
    "[resume]") {
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
  for (const char* q : {"?starting_after=-1", "?starting_after=abc",
                        "?starting_after=99999999999999999999999", "?starting_after="})
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
  engine.install("",
                 mock::parse_script_text(route_toml(Dialect::responses, "", "then = \"ok\"\n"), "test.toml"));
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
