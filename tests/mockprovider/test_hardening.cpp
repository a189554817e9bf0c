// Issue 13, found by hostile input: the admin API's statuses and auth scheme, ledger numbers, the URL
// limit, a too-deep script sent to a running server, bind names. Over loopback.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <cstring>
#include <tuple>

#include "llmchaos/core/toml_reader.hpp"
#include "llmchaos/mockprovider/server.hpp"
#include "server_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::test;
namespace json = boost::json;

namespace {
const std::string script =
    "[route.primary]\ndialect = \"openai\"\nscript = [{ fault = \"ok\", latency_ms = 3.1415926 }]\n";
}  // namespace

TEST_CASE("admin API: a wrong method on a known path is 405 with Allow, an unknown path is 404",
          "[admin][hardening]") {
  TestServer s;
  REQUIRE(s.call("PUT", "/__llmchaos/ns/a/script", script).status == 200);
  for (const auto& [method, path, allowed] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"GET", "/__llmchaos/script", "PUT, POST"},
           {"GET", "/__llmchaos/reset", "POST"},
           {"POST", "/__llmchaos/ledger", "GET"},
           {"DELETE", "/__llmchaos/side_effects", "GET"},
           {"GET", "/__llmchaos/ns/a/script", "PUT, POST"},
           {"PUT", "/__llmchaos/ns/a/ledger", "GET"},
           {"GET", "/__llmchaos/ns/a/side_effect", "POST"},
           {"GET", "/__llmchaos/ns/a", "DELETE"},
           {"POST", "/__llmchaos/health", "GET, HEAD"}}) {
    INFO(method << " " << path);
    const auto r = s.call(method, path);
    CHECK(r.status == 405);
    CHECK(r.header("allow") == allowed);
    CHECK(json::parse(r.body).at("error").as_string().find("not allowed") != json::string::npos);
  }
  CHECK(s.call("GET", "/__llmchaos/nothing").status == 404);
  CHECK(s.call("GET", "/__llmchaos/side_effect").status == 404);  // per namespace only
  CHECK(s.call("GET", "/__llmchaos/ns/a/nothing").status == 404);
  CHECK(s.call("GET", "/__llmchaos/ns/a/ledger").status == 200);
}

TEST_CASE("admin API: a namespace never installed (or deleted) is 404, not 200 and an empty list",
          "[admin][hardening]") {
  TestServer s;
  for (const auto& [method, path] :
       std::vector<std::pair<std::string, std::string>>{{"GET", "/__llmchaos/ns/ghost/ledger"},
                                                        {"GET", "/__llmchaos/ns/ghost/side_effects"},
                                                        {"POST", "/__llmchaos/ns/ghost/reset"},
                                                        {"DELETE", "/__llmchaos/ns/ghost"}}) {
    INFO(method << " " << path);
    const auto r = s.call(method, path);
    CHECK(r.status == 404);
    CHECK(json::parse(r.body).at("error").as_string().find("no namespace \"ghost\"") != json::string::npos);
  }
  REQUIRE(s.call("PUT", "/__llmchaos/ns/ghost/script", script).status == 200);  // installing creates it
  CHECK(s.call("GET", "/__llmchaos/ns/ghost/ledger").status == 200);
  CHECK(s.call("DELETE", "/__llmchaos/ns/ghost").status == 200);
  CHECK(s.call("GET", "/__llmchaos/ns/ghost/ledger").status == 404);
  CHECK(s.call("GET", "/__llmchaos/ledger").status == 200);  // the run-wide views stay
}

TEST_CASE("admin API: the Bearer scheme is case-insensitive", "[admin][hardening]") {
  mock::ServerOptions o;
  o.admin_token = "s3cret";
  TestServer s(o);
  for (const std::string scheme : {"Bearer", "bearer", "BEARER", "bEaReR"})
    CHECK(s.call("GET", "/__llmchaos/ledger", {}, {{"authorization", scheme + " s3cret"}}).status == 200);
  CHECK(s.call("GET", "/__llmchaos/ledger", {}, {{"authorization", "bearer  s3cret"}}).status == 200);
  CHECK(s.call("GET", "/__llmchaos/ledger", {}, {{"authorization", "bearer wrong"}}).status == 401);
  CHECK(s.call("GET", "/__llmchaos/ledger", {}, {{"authorization", "Basic s3cret"}}).status == 401);
  CHECK(s.call("GET", "/__llmchaos/ledger", {}, {{"authorization", "bearers3cret"}}).status == 401);
}

TEST_CASE("ledger times are plain milliseconds with at most 3 decimals", "[admin][hardening]") {
  TestServer s;
  s.install("", script);
  const auto c = chat_call(Dialect::openai, "/primary", false);
  REQUIRE(s.send("POST", c.target, c.body).status == 200);
  s.ledger("", 1);
  const auto body = s.call("GET", "/__llmchaos/ledger").body;
  INFO(body);
  const auto entry = json::parse(body).at(0).as_object();
  for (const char* key : {"received_at_ms", "finished_at_ms"}) {
    const auto at = body.find(std::string("\"") + key + "\":");
    REQUIRE(at != std::string::npos);
    const auto text =
        body.substr(at + std::strlen(key) + 3, body.find_first_of(",}", at) - at - std::strlen(key) - 3);
    INFO(key << " = " << text);
    CHECK(text.find_first_not_of("0123456789.") == std::string::npos);  // not 5.602304429000001E3
    const auto dot = text.find('.');
    CHECK((dot == std::string::npos || text.size() - dot - 1 <= 3));
    CHECK(entry.at(key).to_number<double>() >= 0);
  }
}

TEST_CASE("a URL over the limit is 414, a head over it with a short URL stays 431", "[limits][hardening]") {
  mock::ServerOptions o;
  o.header_limit = 1024;
  TestServer s(o);
  s.install("", script);
  const auto long_url = s.send("GET", "/primary/v1/models?q=" + std::string(4000, 'u'));
  CHECK(long_url.status == 414);
  CHECK(long_url.body.find("too long") != std::string::npos);
  CHECK(s.engine().metrics_text().find("event=\"uri_too_long\"} 1") != std::string::npos);
  CHECK(s.send("GET", "/primary/v1/models", {}, {{"x-pad", std::string(2000, 'p')}}).status == 431);
  CHECK(s.send("GET", "/primary/v1/models").status == 200);
}

TEST_CASE("a script too deep for the TOML reader, PUT to a running server, is a 400 and the server stays up",
          "[admin][hardening]") {
  TestServer s;
  std::string deep = "[";
  for (int i = 0; i < 100000; ++i) deep += "a.";
  deep += "b]\n[route.primary]\n";
  const auto r = s.call("PUT", "/__llmchaos/script", deep);
  CHECK(r.status == 400);
  CHECK(json::parse(r.body).at("error").as_string() ==
        "script:1:2: key nested too deep (limit " + std::to_string(toml_depth_limit) + ")");
  CHECK(s.call("GET", "/__llmchaos/health").status == 200);
  CHECK(s.call("PUT", "/__llmchaos/script", script).status == 200);
}

TEST_CASE(
    "bind: a host name resolves (localhost), a bad address is 'not an IP address' with or without a token",
    "[server][hardening]") {
  mock::ServerOptions o;
  o.bind = "localhost";
  mock::MockServer server(o);
  REQUIRE_NOTHROW(server.start());
  net::HttpCall c;
  c.port = server.port();
  c.target = "/__llmchaos/health";
  CHECK(net::http_call(c).status == 200);
  server.stop();
  for (const std::string address : {"300.1.2.3", "::zz", "bad address!"}) {
    for (const std::string token : {"", "t0ken"}) {
      mock::ServerOptions bad;
      bad.bind = address;
      bad.admin_token = token;
      mock::MockServer refused(bad);
      INFO(address << ", token: " << token);
      CHECK_THROWS_WITH(refused.start(), Catch::Contains(address + ":0: not an IP address"));
    }
  }
}
