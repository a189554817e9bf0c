// The admin API (/__llmchaos/...), /metrics and the admin token, over loopback.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "llmchaos/core/ledger.hpp"
#include "llmchaos/mockprovider/router.hpp"
#include "server_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::test;
namespace json = boost::json;

namespace {
const char* script = R"([route.primary]
dialect = "openai"
script = [{ fault = "rate_429", retry_after_ms = 1 }, { fault = "ok", text = "hello from primary" }]
)";
}  // namespace

TEST_CASE("PUT a namespace script, serve it under /{ns}/{route}, read its ledger as JSON", "[admin]") {
  TestServer s;
  const auto put = s.call("PUT", "/__llmchaos/ns/case7/script", script);
  CHECK(put.status == 200);
  CHECK(json::parse(put.body).at("routes").at(0) == "primary");
  const auto c = chat_call(Dialect::openai, "/case7/primary", false);
  CHECK(s.call("POST", c.target, c.body, {{"x-stainless-retry-count", "0"}}).status == 429);
  CHECK(s.call("POST", c.target, c.body, {{"x-stainless-retry-count", "1"}}).status == 200);
  s.ledger("case7", 2);
  const auto ledger = s.call("GET", "/__llmchaos/ns/case7/ledger");
  CHECK(ledger.status == 200);
  CHECK(ledger.header("content-type") == "application/json");
  const auto entries = ledger_from_json(ledger.body);
  REQUIRE(entries.size() == 2);
  CHECK(entries[0].seq < entries[1].seq);
  CHECK(entries[0].fault == FaultKind::rate_429);
  CHECK(entries[0].stainless_retry_count == "0");
  CHECK(entries[1].stainless_retry_count == "1");
  CHECK(entries[1].outcome == AttemptOutcome::completed);
  CHECK(entries[1].ns == "case7");
  const auto raw = json::parse(ledger.body).at(0).as_object();
  for (auto key :
       {"seq", "ns", "route", "dialect", "attempt", "received_at_ms", "path", "stream", "idempotency_key",
        "x_stainless_retry_count", "request_id", "fault", "outcome", "events_sent", "committed"})
    CHECK(raw.contains(key));
  CHECK(s.call("GET", "/__llmchaos/ledger").body ==
        ledger.body);  // the top-level ledger covers every namespace
}

TEST_CASE("a bad script PUT is refused with 400 and the precise error", "[admin]") {
  TestServer s;
  const auto r = s.call("PUT", "/__llmchaos/ns/x/script", "[route.a]\nscript = [{ fault = \"rate_430\" }]\n");
  CHECK(r.status == 400);
  CHECK(r.header("content-type") == "application/json");
  const auto message = std::string(json::parse(r.body).at("error").as_string());
  CHECK(message.rfind("script of namespace x:2:21: route.a.script[0].fault: unknown fault \"rate_430\"", 0) ==
        0);
  const auto json_bad =
      s.call("PUT", "/__llmchaos/script", R"({"route":{"a":{"script":[{"fault":"ok","times":0}]}}})");
  CHECK(json_bad.status == 400);
  CHECK(json::parse(json_bad.body).at("error") ==
        "script: route.a.script[0].times: must be at least 1 (got 0)");
  CHECK_FALSE(s.engine().has_route("x", "a"));
}

TEST_CASE("a JSON script PUT installs the default namespace", "[admin]") {
  TestServer s;
  CHECK(s.call("PUT", "/__llmchaos/script",
               R"({"route":{"g":{"dialect":"gemini","script":[{"fault":"overloaded"}]}}})")
            .status == 200);
  const auto c = chat_call(Dialect::gemini, "/g", false);
  const auto r = s.call("POST", c.target, c.body);
  CHECK(r.status == 503);
  CHECK(json::parse(r.body).at("error").at("status") == "UNAVAILABLE");
}

TEST_CASE("POST reset clears the ledger and restarts the script", "[admin]") {
  TestServer s;
  s.call("PUT", "/__llmchaos/ns/n/script", script);
  const auto c = chat_call(Dialect::openai, "/n/primary", false);
  CHECK(s.call("POST", c.target, c.body).status == 429);
  s.ledger("n", 1);
  CHECK(s.call("POST", "/__llmchaos/ns/n/reset").status == 200);
  CHECK(s.call("GET", "/__llmchaos/ns/n/ledger").body == "[]");
  CHECK(s.call("POST", c.target, c.body).status == 429);
  s.ledger("n", 1);
  CHECK(s.call("POST", "/__llmchaos/reset").status == 200);
  CHECK(s.engine().ledger_all().empty());
}

TEST_CASE("side effects can be read per namespace, a namespace can be deleted", "[admin]") {
  TestServer s;
  s.call("PUT", "/__llmchaos/ns/n/script", script);
  CHECK(s.call("POST", "/n/primary/__llmchaos/side_effect", R"({"operation_id":"op-1","tool":"t"})").status ==
        200);
  const auto effects = side_effects_from_json(s.call("GET", "/__llmchaos/ns/n/side_effects").body);
  REQUIRE(effects.size() == 1);
  CHECK(effects[0].operation_id == "op-1");
  CHECK(s.call("DELETE", "/__llmchaos/ns/n").status == 200);
  CHECK_FALSE(s.engine().has_route("n", "primary"));
}

TEST_CASE("health and metrics answer, unknown admin paths are 404", "[admin]") {
  TestServer s;
  s.call("PUT", "/__llmchaos/script", script);
  const auto c = chat_call(Dialect::openai, "/primary", false);
  s.call("POST", c.target, c.body);
  s.ledger("", 1);
  const auto health = s.call("GET", "/__llmchaos/health");
  CHECK(health.status == 200);
  CHECK(json::parse(health.body).at("status") == "ok");
  const auto metrics = s.call("GET", "/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.header("content-type").rfind("text/plain", 0) == 0);
  CHECK(metrics.body.find(
            "llmchaos_attempts_total{route=\"primary\",fault=\"rate_429\",outcome=\"completed\"} 1") !=
        std::string::npos);
  CHECK(s.call("GET", "/__llmchaos/nothing").status == 404);
}

TEST_CASE("with an admin token, admin requests without it get 401", "[admin]") {
  mock::ServerOptions o;
  o.admin_token = "s3cret";
  TestServer s(o);
  const auto denied = s.call("PUT", "/__llmchaos/script", script);
  CHECK(denied.status == 401);
  CHECK(json::parse(denied.body).at("error").as_string().find("admin token") != json::string::npos);
  CHECK(s.call("GET", "/__llmchaos/ledger", {}, {{"authorization", "Bearer wrong"}}).status == 401);
  CHECK(s.call("PUT", "/__llmchaos/script", script, {{"authorization", "Bearer s3cret"}}).status == 200);
  CHECK(s.call("GET", "/__llmchaos/ledger", {}, {{"x-llmchaos-admin-token", "s3cret"}}).status == 200);
  CHECK(s.call("GET", "/__llmchaos/health").status == 200);  // liveness stays open
  const auto c = chat_call(Dialect::openai, "/primary", false);
  CHECK(s.call("POST", c.target, c.body).status == 429);  // the data plane needs no admin token
}

TEST_CASE("a non-loopback bind without an admin token is refused at start", "[admin]") {
  mock::ServerOptions o;
  o.bind = "0.0.0.0";
  mock::MockServer server(o);
  try {
    server.start();
    FAIL("expected a refusal");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()).find("refusing to bind 0.0.0.0") != std::string::npos);
    CHECK(std::string(e.what()).find("--admin-token") != std::string::npos);
  }
}

TEST_CASE("the router answers without a socket: namespaced and default routes, unknown ones 404", "[admin]") {
  ManualClock clock;
  mock::Engine engine(clock);
  engine.install("", mock::parse_script_text(script, "s"));
  engine.install("ns", mock::parse_script_text("[route.other]\ndialect = \"anthropic\"\n", "s"));
  mock::Router router(engine, {});
  mock::RawRequest req;
  req.method = "POST";
  req.target = "/ns/other/v1/messages";
  req.body = R"({"model":"m","max_tokens":5,"messages":[]})";
  auto routed = router.handle(req);
  CHECK(routed.seq.has_value());
  CHECK(routed.plan.status == 200);
  CHECK(engine.ledger("ns").at(0).path == "/v1/messages");
  req.target = "/primary/v1/chat/completions?x=1";
  routed = router.handle(req);
  CHECK(routed.plan.status == 429);
  CHECK(engine.ledger("").at(0).path == "/v1/chat/completions?x=1");
  req.target = "/ns/missing/v1/messages";
  routed = router.handle(req);
  CHECK(routed.plan.status == 404);
  CHECK_FALSE(routed.seq.has_value());
  CHECK(router.reject("/ns/other/v1/messages", 413).body.find("request_too_large") != std::string::npos);
}

TEST_CASE("parse_admin_path: an endpoint of every namespace, of one, the namespace itself, or none") {
  using Kind = mock::AdminPath::Kind;
  const auto top = mock::parse_admin_path({"ledger"});
  CHECK(top.kind == Kind::endpoint);
  CHECK(top.all);
  CHECK(top.what == "ledger");
  const auto scoped = mock::parse_admin_path({"ns", "case-1", "script"});
  CHECK(scoped.kind == Kind::endpoint);
  CHECK_FALSE(scoped.all);
  CHECK(scoped.ns == "case-1");
  CHECK(scoped.what == "script");
  const auto itself = mock::parse_admin_path({"ns", "case-1"});
  CHECK(itself.kind == Kind::namespace_itself);
  CHECK(itself.ns == "case-1");
  CHECK(mock::parse_admin_path({"ns", "bad name", "ledger"}).kind == Kind::none);
  CHECK(mock::parse_admin_path({"a", "b", "c", "d"}).kind == Kind::none);
}

TEST_CASE("ready and health stay open under a token; a token's prefix or a longer guess is refused",
          "[admin][issue42]") {
  mock::ServerOptions o;
  o.admin_token = "s3cret-token";
  TestServer s(o);
  const auto ready = s.call("GET", "/__llmchaos/ready");
  CHECK(ready.status == 200);
  CHECK(json::parse(ready.body).at("status") == "ready");
  CHECK(s.call("POST", "/__llmchaos/ready").status == 405);
  CHECK(s.call("GET", "/metrics").status == 200);
  for (const std::string guess : {"s3cret", "s3cret-token-", "S3CRET-TOKEN", "", "s3cret-tokeN"}) {
    INFO(guess);
    const auto r = s.call("GET", "/__llmchaos/ledger", {}, {{"authorization", "Bearer " + guess}});
    CHECK(r.status == 401);
    CHECK(r.header("content-type") == "application/json");
    CHECK(s.call("GET", "/__llmchaos/ledger", {}, {{"x-llmchaos-admin-token", guess}}).status == 401);
  }
  // a refused script install changes nothing
  CHECK(s.call("PUT", "/__llmchaos/script", script, {{"authorization", "Bearer nope"}}).status == 401);
  const auto c = chat_call(Dialect::openai, "/primary", false);
  CHECK(s.call("POST", c.target, c.body).status == 404);
}

TEST_CASE("the ledger never keeps a credential: Gemini's ?key= is redacted, headers are not recorded",
          "[admin][issue42]") {
  TestServer s;
  s.call("PUT", "/__llmchaos/script", "[route.g]\ndialect = \"gemini\"\n");
  const auto c = chat_call(Dialect::gemini, "/g", false);
  const auto target = c.target + (c.target.find('?') == std::string::npos ? "?" : "&") + "key=AIzaSECRET";
  CHECK(s.call("POST", target, c.body, {{"authorization", "Bearer sk-SECRET2"}, {"x-api-key", "SECRET3"}})
            .status == 200);
  const auto ledger = s.call("GET", "/__llmchaos/ledger");
  CHECK(ledger.body.find("SECRET") == std::string::npos);
  CHECK(ledger.body.find("key=REDACTED") != std::string::npos);
}
