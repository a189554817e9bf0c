// The credential check (route key `require_auth`, `serve --require-auth`): each dialect reads the key where
// its provider does (DialectSpec::auth); a request without one gets the provider's own missing-key answer,
// ledgered with missing_credential and taking no script step. Off by default. Loopback, port 0.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "llmchaos/core/ledger.hpp"
#include "llmchaos/mockprovider/dialect.hpp"
#include "server_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::test;
namespace json = boost::json;

namespace {
using Headers = std::vector<std::pair<std::string, std::string>>;

const Dialect all_dialects[] = {Dialect::openai,    Dialect::anthropic, Dialect::gemini,
                                Dialect::responses, Dialect::azure,     Dialect::bedrock};

// The header each dialect's official SDK sends its key in.
Headers sdk_key(Dialect d) {
  switch (d) {
    case Dialect::openai:
    case Dialect::responses:
      return {{"authorization", "Bearer sk-test"}};
    case Dialect::anthropic:
      return {{"x-api-key", "sk-ant-test"}};
    case Dialect::gemini:
      return {{"x-goog-api-key", "gemini-key"}};
    case Dialect::azure:
      return {{"api-key", "azure-key"}};
    case Dialect::bedrock:  // SigV4, as botocore signs (the signature is never verified)
      return {{"authorization",
               "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20261206/us-east-1/bedrock/aws4_request, "
               "SignedHeaders=host;x-amz-date, Signature=abc"}};
  }
  return {};
}

bool keyed(Dialect d, const Headers& h, std::string_view target = "/v1/x") {
  return mock::has_credential(mock::dialect_spec(d), h, target);
}
}  // namespace

TEST_CASE("each dialect finds the key where its provider reads it, and nowhere else", "[auth]") {
  for (const auto d : all_dialects) {
    CAPTURE(to_string(d));
    CHECK(keyed(d, sdk_key(d)));
    CHECK_FALSE(keyed(d, {}));
    CHECK_FALSE(keyed(d, {{"x-other", "k"}}));
    for (const auto& [name, value] : sdk_key(d)) CHECK(mock::credential_header(name));
  }
  // Bearer: the scheme in any case, a key after it; an empty key or another scheme is none.
  CHECK(keyed(Dialect::openai, {{"authorization", "bearer sk-1"}}));
  CHECK_FALSE(keyed(Dialect::openai, {{"authorization", "Bearer "}}));
  CHECK_FALSE(keyed(Dialect::openai, {{"authorization", "Bearer"}}));
  CHECK_FALSE(keyed(Dialect::openai, {{"authorization", "Basic abc"}}));
  CHECK_FALSE(keyed(Dialect::openai, {{"x-api-key", "sk-1"}}));
  // Anthropic takes x-api-key (SDK 0.x) or Authorization: Bearer (1.x); Azure api-key or an Entra token.
  CHECK(keyed(Dialect::anthropic, {{"authorization", "Bearer sk-ant"}}));
  CHECK_FALSE(keyed(Dialect::anthropic, {{"x-api-key", "  "}}));
  CHECK(keyed(Dialect::azure, {{"authorization", "Bearer entra-token"}}));
  // Gemini: the header or the key= query parameter (a REST client's), never an empty one.
  CHECK(keyed(Dialect::gemini, {}, "/v1beta/models/m:generateContent?key=abc"));
  CHECK(keyed(Dialect::gemini, {}, "/v1beta/models/m:streamGenerateContent?alt=sse&key=abc"));
  CHECK_FALSE(keyed(Dialect::gemini, {}, "/v1beta/models/m:generateContent?key="));
  CHECK_FALSE(keyed(Dialect::gemini, {}, "/v1beta/models/m:generateContent?apikey=abc"));
  CHECK_FALSE(keyed(Dialect::openai, {}, "/v1/chat/completions?key=abc"));
}

TEST_CASE(
    "a route with require_auth answers a keyless request with the provider's missing-key error and ledgers "
    "it",
    "[auth]") {
  for (const auto d : all_dialects) {
    CAPTURE(to_string(d));
    TestServer s;
    s.install("", route_toml(d, R"({ fault = "ok" }, { fault = "server_500" })", "require_auth = true\n"));
    const auto refused = s.chat(d, "/r", false);
    const auto body = refused.json();
    switch (d) {
      case Dialect::openai:
      case Dialect::responses:
        CHECK(refused.status == 401);
        CHECK(body.at("error").at("type").as_string() == "invalid_request_error");
        CHECK(std::string(body.at("error").at("message").as_string())
                  .starts_with("You didn't provide an API key."));
        CHECK(body.at("error").at("code").is_null());
        break;
      case Dialect::anthropic:
        CHECK(refused.status == 401);
        CHECK(body.at("type").as_string() == "error");
        CHECK(body.at("error").at("type").as_string() == "authentication_error");
        CHECK(body.at("error").at("message").as_string() == "x-api-key header is required");
        CHECK(body.at("request_id").is_string());
        break;
      case Dialect::gemini:
        CHECK(refused.status == 403);
        CHECK(body.at("error").at("status").as_string() == "PERMISSION_DENIED");
        CHECK(body.at("error").at("code").to_number<int>() == 403);
        break;
      case Dialect::azure:
        CHECK(refused.status == 401);
        CHECK(body.at("statusCode").to_number<int>() == 401);
        CHECK(std::string(body.at("message").as_string())
                  .starts_with("Access denied due to missing subscription key."));
        break;
      case Dialect::bedrock:  // karthink/gptel#1397: the capital M is the service's
        CHECK(refused.status == 403);
        CHECK(refused.header("x-amzn-errortype").starts_with("AccessDeniedException:"));
        CHECK(body.at("Message").as_string() == "Authorization header is missing");
        break;
    }
    // The refusal took no step: the keyed request gets the first one (ok), the next the second.
    CHECK(s.chat(d, "/r", false, {}, sdk_key(d)).status == 200);
    CHECK(s.chat(d, "/r", true, {}, sdk_key(d)).status == 500);
    const auto l = s.ledger("", 3);
    REQUIRE(l.size() == 3);
    CHECK(l[0].missing_credential);
    CHECK(l[0].fault == FaultKind::auth);
    CHECK(l[0].status == refused.status);
    CHECK_FALSE(l[1].missing_credential);
    CHECK(l[1].fault == FaultKind::ok);
    CHECK(l[2].fault == FaultKind::server_500);
    const auto back = ledger_from_json(ledger_to_json(l));
    CHECK(back[0].missing_credential);
    CHECK_FALSE(back[1].missing_credential);
    CHECK(ledger_to_json({l[1]}).find("missing_credential") == std::string::npos);  // absent unless true
  }
}

TEST_CASE(
    "the credential is not checked unless asked: by default, with require_auth = false, and per serve "
    "--require-auth",
    "[auth]") {
  TestServer plain;
  plain.install("", route_toml(Dialect::openai, R"({ fault = "ok" })"));
  CHECK(plain.chat(Dialect::openai, "/r", false).status == 200);  // the default: no key needed

  mock::ServerOptions o;
  o.require_auth = true;
  TestServer strict(o);
  strict.install("",
                 "[route.a]\ndialect = \"gemini\"\nscript = []\n"
                 "[route.b]\ndialect = \"gemini\"\nrequire_auth = false\nscript = []\n");
  CHECK(strict.chat(Dialect::gemini, "/a", false).status == 403);
  CHECK(strict.chat(Dialect::gemini, "/a", false, {}, sdk_key(Dialect::gemini)).status == 200);
  auto call = chat_call(Dialect::gemini, "/a", false);
  CHECK(strict.send("POST", call.target + "?key=k", call.body).status == 200);
  CHECK(strict.chat(Dialect::gemini, "/b", false).status == 200);  // the route says no
}
