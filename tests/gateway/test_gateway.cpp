// The gateway over loopback: the real mock provider as its upstream, real sockets on 127.0.0.1.
#include <algorithm>
#include <catch2/catch.hpp>
#include <thread>

#include "gateway_fixture.hpp"
#include "llmchaos/client/dialect_codec.hpp"
#include "llmchaos/client/sse.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "test_env.hpp"

using namespace llmchaos;
using llmchaos::test::gateway_toml;
using llmchaos::test::GatewayWorld;

namespace {

const std::string healthy_script = R"(
[route.primary]
dialect = "openai"
text = "alpha beta gamma"
[route.backup]
dialect = "anthropic"
text = "alpha beta gamma"
)";

const std::string two_routes = R"(
[workflow]
primary = "primary"
fallback = ["backup"]
max_total_attempts = 3
max_elapsed_ms = 5000
attempt_timeout_ms = 2000
[backoff]
base_ms = 5
cap_ms = 20
[route.primary]
base_url = "{mock}/primary"
dialect = "openai"
[route.backup]
base_url = "{mock}/backup"
dialect = "anthropic"
)";

void require_openai_error(const net::HttpReply& r, int status, const std::string& code) {
  INFO(r.body);
  REQUIRE(r.status == status);
  auto v = boost::json::parse(r.body);
  const auto& e = v.at("error").as_object();
  CHECK(e.at("message").is_string());
  CHECK(!e.at("message").as_string().empty());
  CHECK(e.at("type").is_string());
  CHECK(e.contains("param"));
  if (code.empty())
    CHECK(e.at("code").is_null());
  else
    CHECK(e.at("code") == boost::json::value(code));
}

}  // namespace

TEST_CASE("a burst of rpm + 5 requests of one key gets exactly 5 rejected with 429 and retry-after",
          "[gateway][limiter]") {
  GatewayWorld w(healthy_script, gateway_toml("[tiers.free]\nrpm = 8\n" + two_routes));
  // All at once, each on its own connection: the limiter answers without waiting for the stack.
  std::vector<net::HttpReply> replies(8 + 5);
  std::vector<std::thread> burst;
  for (auto& reply : replies) burst.emplace_back([&w, &reply] { reply = w.chat("sk-free-1"); });
  for (auto& t : burst) t.join();
  int ok = 0, limited = 0;
  for (const auto& r : replies) {
    if (r.status == 200) ++ok;
    if (r.status == 429) {
      ++limited;
      require_openai_error(r, 429, "rate_limit_exceeded");
      CHECK(std::stoi(r.header("retry-after")) >= 1);
      CHECK(std::stoi(r.header("retry-after")) <= 60);
      CHECK(std::stol(r.header("retry-after-ms")) > 0);
      CHECK(r.header("x-llmchaos-action") == "rejected");
    }
  }
  CHECK(ok == 8);
  CHECK(limited == 5);
  CHECK(w.attempts_on("primary") == 8);  // a rejected request never reaches an upstream
  CHECK(w.stats().at("keys").at("sk-fre***").at("rate_limited") == 5);
}

TEST_CASE("a tier's tokens per minute rejects a request whose estimate does not fit", "[gateway][limiter]") {
  GatewayWorld w(healthy_script, gateway_toml("[tiers.free]\ntpm = 100\n" + two_routes));
  const auto body = [](int max_tokens) {
    return fmt::format(R"({{"model":"m","messages":[{{"role":"user","content":"hi"}}],"max_tokens":{}}})",
                       max_tokens);
  };
  // Charged its estimate up front, then settled to what it used (about 5 tokens).
  auto first = w.call("POST", "/v1/chat/completions", body(60), {{"authorization", "Bearer sk-free-1"}});
  CHECK(first.status == 200);
  auto second = w.call("POST", "/v1/chat/completions", body(98), {{"authorization", "Bearer sk-free-1"}});
  require_openai_error(second, 429, "rate_limit_exceeded");
  CHECK(!second.header("retry-after-ms").empty());
}

TEST_CASE("an unknown or missing key gets 401 in the OpenAI error shape", "[gateway][auth]") {
  GatewayWorld w(healthy_script, gateway_toml("[tiers.free]\n" + two_routes));
  require_openai_error(w.chat("sk-nobody"), 401, "invalid_api_key");
  require_openai_error(w.chat(""), 401, "invalid_api_key");
  CHECK(w.attempts_on("primary") == 0);
}

TEST_CASE("a malformed body gets 400 in the OpenAI error shape", "[gateway][wire]") {
  GatewayWorld w(healthy_script, gateway_toml("[tiers.free]\n" + two_routes));
  const std::vector<std::pair<std::string, std::string>> auth{{"authorization", "Bearer sk-free-1"}};
  require_openai_error(w.call("POST", "/v1/chat/completions", "{not json", auth), 400, "");
  auto no_messages = w.call("POST", "/v1/chat/completions", R"({"model":"m"})", auth);
  INFO(no_messages.body);
  REQUIRE(no_messages.status == 400);
  CHECK(boost::json::parse(no_messages.body).at("error").at("param") == "messages");
  require_openai_error(
      w.call("POST", "/v1/chat/completions",
             R"({"model":"m","messages":[{"role":"user","content":"x"}],"stream":"yes"})", auth),
      400, "");
  CHECK(w.attempts_on("primary") == 0);
}

TEST_CASE("an answer carries the decision headers, a retry shows as retry_recovery", "[gateway][headers]") {
  const std::string script = R"(
[route.primary]
dialect = "openai"
text = "alpha beta gamma"
script = [{ fault = "overloaded" }]
[route.backup]
dialect = "anthropic"
)";
  GatewayWorld w(script, gateway_toml("[tiers.free]\n" + two_routes));
  auto r = w.chat("sk-free-1");
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(r.header("x-llmchaos-action") == "retry_recovery");
  CHECK(r.header("x-llmchaos-attempts") == "2");
  CHECK(r.header("x-llmchaos-route") == "primary");
  CHECK(r.header("x-llmchaos-actions") == "retry");
  auto v = boost::json::parse(r.body);
  CHECK(v.at("object") == "chat.completion");
  CHECK(v.at("choices").at(0).at("message").at("content") == "alpha beta gamma");
  CHECK(v.at("usage").at("completion_tokens").as_int64() > 0);
}

TEST_CASE("the breaker of a failing upstream opens and persists across requests, the gateway falls back",
          "[gateway][breaker]") {
  const std::string script = R"(
[route.primary]
dialect = "openai"
then = "overloaded"
[route.backup]
dialect = "anthropic"
text = "from the backup"
)";
  const std::string config = two_routes + R"(
[route.primary.breaker]
failure_threshold = 2
open_ms = 60000
)";
  GatewayWorld w(script, gateway_toml("[tiers.free]\n" + config));
  // Request 1: primary fails twice (retry, then the breaker opens) -> fallback to the backup.
  auto first = w.chat("sk-free-1");
  INFO(first.body);
  REQUIRE(first.status == 200);
  CHECK(first.header("x-llmchaos-action") == "fallback_recovery");
  CHECK(first.header("x-llmchaos-route") == "backup");
  const auto primary_attempts = w.attempts_on("primary");
  CHECK(primary_attempts == 2);
  // Later requests: the open breaker sends nothing to the primary.
  for (int i = 0; i < 3; ++i) {
    auto r = w.chat("sk-free-1");
    REQUIRE(r.status == 200);
    CHECK(r.header("x-llmchaos-action") == "fallback_recovery");
    CHECK(boost::json::parse(r.body).at("choices").at(0).at("message").at("content") == "from the backup");
  }
  CHECK(w.attempts_on("primary") == primary_attempts);
  auto stats = w.stats();
  CHECK(stats.at("breakers").at("default").at("primary").at("state") == "open");
  CHECK(stats.at("breakers").at("default").at("backup").at("state") == "closed");
  CHECK(stats.at("routes").at("primary").at("failures") == 2);
  CHECK(stats.at("routes").at("backup").at("successes") == 4);
}

TEST_CASE("x-llmchaos-points lists every failure point as ACTION ROUTE ATTEMPT RULE, '-' for no attempt sent",
          "[gateway][headers]") {
  const std::string script = R"(
[route.primary]
dialect = "openai"
then = "overloaded"
[route.backup]
dialect = "anthropic"
)";
  GatewayWorld w(script, gateway_toml("[tiers.free]\n" + two_routes +
                                      "[route.primary.breaker]\nfailure_threshold = 2\nopen_ms = 60000\n"));
  // Attempt 0 fails: retry (rule 4); attempt 1 fails and opens the breaker: fallback (rule 5).
  auto first = w.chat("sk-free-1");
  REQUIRE(first.status == 200);
  CHECK(first.header("x-llmchaos-points") == "retry primary 0 4,fallback primary 1 5");
  CHECK(first.header("x-llmchaos-actions") == "retry,fallback");
  // The breaker is open: the point is decided without sending anything to the primary.
  auto second = w.chat("sk-free-1");
  REQUIRE(second.status == 200);
  CHECK(second.header("x-llmchaos-points") == "fallback primary - 5");
  CHECK(second.header("x-llmchaos-unsent-points") == "1");
}

TEST_CASE("x-llmchaos-points is present and empty when the request had no failure point",
          "[gateway][headers]") {
  GatewayWorld w(healthy_script, gateway_toml("[tiers.free]\n" + two_routes));
  auto r = w.chat("sk-free-1");
  REQUIRE(r.status == 200);
  const auto& h = r.headers;
  CHECK(std::any_of(h.begin(), h.end(),
                    [](const auto& kv) { return kv.first == "x-llmchaos-points" && kv.second.empty(); }));
}

TEST_CASE("the drain answer carries each redelivery's failure points with their rule text",
          "[gateway][queue]") {
  const std::string script = R"(
[route.primary]
dialect = "openai"
text = "alpha beta gamma"
script = [{ fault = "server_500" }, { fault = "overloaded" }]
[route.backup]
dialect = "anthropic"
)";
  std::string config = two_routes;
  config.replace(config.find("max_total_attempts = 3"), 22, "max_total_attempts = 3\nqueue_allowed = true");
  GatewayWorld w(script, gateway_toml("[tiers.free]\n" + config));
  auto queued = w.chat("sk-free-1", false, {{"idempotency-key", "op-1"}});
  INFO(queued.body);
  REQUIRE(queued.status == 202);
  CHECK(queued.header("x-llmchaos-points").rfind("queue primary 0 ", 0) == 0);
  auto drained = w.call("POST", "/v1/llmchaos/drain", "", {{"authorization", "Bearer sk-free-1"}});
  INFO(drained.body);
  REQUIRE(drained.status == 200);
  const auto answer = boost::json::parse(drained.body);
  const auto& item = answer.at("redelivered").at(0);
  CHECK(item.at("operation_id") == "op-1");
  CHECK(item.at("outcome") == "retry_recovery");
  const auto& points = item.at("points").as_array();
  REQUIRE(points.size() == 1);
  CHECK(points[0].at("action") == "retry");
  CHECK(points[0].at("route") == "primary");
  CHECK(points[0].at("attempt") == 0);
  CHECK(points[0].at("rule") == 4);
  CHECK(std::string_view(points[0].at("rule_text").as_string()).rfind("4: ", 0) == 0);
}

TEST_CASE("the balancer sends most of a model group's load to its faster endpoint", "[gateway][balancer]") {
  const std::string script = R"(
[route.fast]
dialect = "openai"
then = "ok"
script = [{ fault = "ok", latency_ms = 5, times = 1000 }]
[route.slow]
dialect = "openai"
script = [{ fault = "ok", latency_ms = 120, times = 1000 }]
)";
  const std::string config = R"(
[tiers.free]
[workflow]
primary = "gpt"
max_total_attempts = 2
[route.fast]
base_url = "{mock}/fast"
dialect = "openai"
[route.slow]
base_url = "{mock}/slow"
dialect = "openai"
[route.gpt]
expected_latency_ms = 200
[groups.gpt]
routes = ["fast", "slow"]
)";
  GatewayWorld w(script, gateway_toml(config));
  for (int i = 0; i < 20; ++i) {
    auto r = w.chat("sk-free-1");
    REQUIRE(r.status == 200);
    CHECK(r.header("x-llmchaos-route") == "gpt");
  }
  const auto fast = w.attempts_on("fast"), slow = w.attempts_on("slow");
  INFO("fast " << fast << ", slow " << slow);
  CHECK(fast + slow == 20);
  CHECK(slow >= 1);         // each endpoint is measured
  CHECK(fast >= 3 * slow);  // then the latency EMA steers the load
  auto members = w.stats().at("groups").at("gpt").as_array();
  CHECK(members.at(0).at("route") == "fast");
  CHECK(members.at(0).at("latency_ema_ms").as_double() < members.at(1).at("latency_ema_ms").as_double());
}

TEST_CASE("a quality chain is chosen by the request header or the key's tier", "[gateway][quality]") {
  const std::string config = two_routes + R"(
[tiers.free]
quality = "cheap"
[tiers.pro]
[quality.cheap]
chain = ["backup"]
[quality.best]
chain = ["primary", "backup"]
)";
  GatewayWorld w(healthy_script, "[keys]\n\"sk-free-1\" = \"free\"\n\"sk-pro-1\" = \"pro\"\n" + config);
  auto cheap = w.chat("sk-free-1");
  REQUIRE(cheap.status == 200);
  CHECK(cheap.header("x-llmchaos-route") == "backup");
  CHECK(cheap.header("x-llmchaos-quality") == "cheap");
  auto best = w.chat("sk-free-1", false, {{"x-llmchaos-quality", "best"}});
  CHECK(best.header("x-llmchaos-route") == "primary");
  auto pro = w.chat("sk-pro-1");
  CHECK(pro.header("x-llmchaos-quality") == "default");
  require_openai_error(w.chat("sk-pro-1", false, {{"x-llmchaos-quality", "nope"}}), 400, "unknown_quality");
}

TEST_CASE(
    "a streamed answer through the gateway is OpenAI chunks ending in [DONE], from an Anthropic upstream",
    "[gateway][stream]") {
  const std::string config = two_routes + "\n[quality.anthropic]\nchain = [\"backup\"]\n";
  GatewayWorld w(healthy_script, gateway_toml("[tiers.free]\n" + config));
  auto r = w.chat("sk-free-1", true, {{"x-llmchaos-quality", "anthropic"}});
  INFO(r.body);
  REQUIRE(r.status == 200);
  CHECK(r.header("content-type") == "text/event-stream");
  CHECK(r.header("x-llmchaos-action") == "primary_success");
  CHECK(r.header("x-llmchaos-attempts") == "1");
  CHECK(r.header("x-llmchaos-route") == "backup");
  client::SseParser parser;
  client::Answer answer;
  bool ended = false;
  int content_events = 0;
  for (const auto& ev : parser.feed(r.body)) {
    auto res = client::codec_for(Dialect::openai).on_event(ev, answer);
    CHECK(res.kind != client::EventKind::malformed);
    content_events += res.kind == client::EventKind::content;
    ended = ended || res.end;
  }
  CHECK(ended);
  CHECK(content_events == 3);
  CHECK(answer.text == "alpha beta gamma");
  CHECK(answer.finish_reason == "stop");
  CHECK(answer.output_tokens > 0);
  CHECK(r.body.find("\"llmchaos\":{\"action\":\"primary_success\"") != std::string::npos);
}

TEST_CASE("a stream cut after tokens ends with an in-stream error and no [DONE]", "[gateway][stream]") {
  const std::string script = R"(
[route.primary]
dialect = "openai"
text = "alpha beta gamma delta"
script = [{ fault = "stream_cut", cut_after_events = 2 }]
[route.backup]
dialect = "anthropic"
)";
  GatewayWorld w(script, gateway_toml("[tiers.free]\n" + two_routes));
  auto r = w.chat("sk-free-1", true);
  INFO(r.body);
  REQUIRE(r.status == 200);  // the head went out with the first token
  CHECK(r.body.find("[DONE]") == std::string::npos);
  CHECK(r.body.find("\"error\"") != std::string::npos);
  CHECK(w.attempts_on("primary") == 1);  // committed: fail closed, never replayed
  CHECK(w.attempts_on("backup") == 0);
}

TEST_CASE("a failure the stack fails closed is an OpenAI-shaped 502", "[gateway][fail_closed]") {
  const std::string script = R"(
[route.primary]
dialect = "openai"
script = [{ fault = "bad_request" }]
[route.backup]
dialect = "anthropic"
)";
  GatewayWorld w(script, gateway_toml("[tiers.free]\n" + two_routes));
  auto r = w.chat("sk-free-1");
  require_openai_error(r, 502, "request");
  CHECK(r.header("x-llmchaos-action") == "fail_closed");
  CHECK(r.header("x-llmchaos-attempts") == "1");
}

TEST_CASE("/health, /stats and /metrics describe the gateway", "[gateway][observability]") {
  GatewayWorld w(healthy_script, gateway_toml("[tiers.free]\nrpm = 1\n" + two_routes));
  CHECK(w.chat("sk-free-1").status == 200);
  CHECK(w.chat("sk-free-1").status == 429);
  CHECK(w.chat("sk-bad").status == 401);

  auto health = w.call("GET", "/health");
  CHECK(health.status == 200);
  CHECK(boost::json::parse(health.body).at("status") == "ok");
  // the probes serve and proxy answer too (the image's HEALTHCHECK, the Helm chart's probes)
  auto ready = w.call("GET", "/__llmchaos/ready");
  CHECK(ready.status == 200);
  CHECK(boost::json::parse(ready.body).at("status") == "ready");
  CHECK(w.call("GET", "/__llmchaos/health").status == 200);

  auto stats = w.stats();
  CHECK(stats.at("requests") == 1);
  CHECK(stats.at("outcomes").at("primary_success") == 1);
  CHECK(stats.at("rejected").at("rate_limited") == 1);
  CHECK(stats.at("rejected").at("unauthorized") == 1);
  CHECK(stats.at("routes").at("primary").at("attempts") == 1);
  CHECK(stats.at("routes").at("backup").at("attempts") == 0);
  CHECK(stats.at("breakers").at("default").at("primary").at("state") == "closed");
  const auto& key = stats.at("keys").at("sk-fre***");
  CHECK(key.at("tier") == "free");
  CHECK(key.at("requests") == 1);
  CHECK(key.at("answered") == 1);
  CHECK(key.at("rate_limited") == 1);

  auto metrics = w.call("GET", "/metrics");
  CHECK(metrics.status == 200);
  CHECK(metrics.header("content-type").rfind("text/plain", 0) == 0);
  for (const char* line :
       {"# HELP llmchaos_gateway_requests_total ", "# TYPE llmchaos_gateway_requests_total counter",
        "llmchaos_gateway_requests_total{outcome=\"primary_success\"} 1",
        "llmchaos_gateway_rejected_total{reason=\"rate_limited\"} 1",
        "# TYPE llmchaos_gateway_breaker_state gauge",
        "llmchaos_gateway_breaker_state{quality=\"default\",route=\"primary\"} 0",
        "llmchaos_gateway_upstream_attempts_total{route=\"primary\"} 1"}) {
    INFO(line);
    CHECK(metrics.body.find(line) != std::string::npos);
  }
  CHECK(w.call("GET", "/nope").status == 404);
  CHECK(w.call("GET", "/v1/chat/completions").status == 405);
}

TEST_CASE("the example gateway.toml loads: groups, chains, tiers and keys", "[gateway][config]") {
  const auto c = gateway::load_gateway_config(test::source_dir() + "/examples/gateway.toml");
  CHECK(c.groups.at("gpt").members == std::vector<std::string>{"gpt-east", "gpt-west"});
  CHECK(c.qualities.at("standard") == std::vector<std::string>{"gpt", "claude"});
  CHECK(c.qualities.at("default") == std::vector<std::string>{"gpt", "claude"});
  CHECK(c.tiers.at("free").limits.requests_per_minute == 20);
  CHECK(c.keys.at("sk-pro-1") == "pro");
  CHECK(c.weights.at("gpt-east") == 2);
}

TEST_CASE("gateway config errors name file, line and column", "[gateway][config]") {
  auto error_of = [](const std::string& text) {
    try {
      gateway::gateway_config_from_toml(text, "gw.toml");
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string route =
      "[route.a]\nbase_url = \"http://127.0.0.1:1/a\"\ndialect = \"openai\"\n[workflow]\nprimary = \"a\"\n";
  CHECK_THAT(error_of(route + "[keys]\n\"k\" = \"gold\"\n"),
             Catch::Matches("gw\\.toml:7:\\d+: .*unknown tier \"gold\".*"));
  CHECK_THAT(error_of(route + "[tiers.free]\nrpm = 0\n"), Catch::Matches("gw\\.toml:7:\\d+: .*rpm.*"));
  CHECK_THAT(error_of(route + "[tiers.free]\nrmp = 5\n"), Catch::Matches("gw\\.toml:7:\\d+: .*rmp.*"));
  CHECK_THAT(error_of(route + "[quality.q]\nchain = [\"a\", \"zz\"]\n"),
             Catch::Matches("gw\\.toml:7:\\d+: .*\"zz\".*"));
  CHECK_THAT(error_of("[route.a]\nbase_url = \"http://x/a\"\n[workflow]\nprimary = \"a\"\n"),
             Catch::Matches("gw\\.toml:1:\\d+: .*both base_url and dialect.*"));
  CHECK(error_of(route) == "no error");
}
