// The script loader: valid scripts load into the spec; each invalid field is refused with its message.
#include <catch2/catch.hpp>

#include "llmchaos/core/toml_reader.hpp"
#include "llmchaos/mockprovider/script.hpp"

using namespace llmchaos;
using namespace llmchaos::mock;

namespace {
std::string error_of(const std::string& text) {
  try {
    parse_script_text(text, "f.toml");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "no error";
}
// A one-route document whose third line is `script = [<step>]`.
std::string with_step(const std::string& step) {
  return "[route.a]\ndialect = \"openai\"\nscript = [" + step + "]\n";
}
}  // namespace

TEST_CASE("a script with every step key loads into the spec", "[script]") {
  const auto s = parse_script_text(R"([route.primary]
dialect = "anthropic"
text = "hello from primary"
then = "server_500"
script = [
  { fault = "rate_429", retry_after_ms = 1, times = 2 },
  { fault = "overloaded", until_ms = 60000 },
  { fault = "stream_stall", cut_after_events = 3, stall_ms = 5, inter_event_ms = 1, latency_ms = 2 },
  { fault = "slow_first_token", first_token_ms = 7, model = "m", status = 203, text = "t" },
  { fault = "post_commit_timeout", hold_ms = 9 },
  { fault = "slow", p50_ms = 10, p95_ms = 20 },
  { fault = "schema_missing", missing_field = "label" },
]
[route.backup]
script = [{ fault = "ok" }]
)",
                                   "f.toml");
  REQUIRE(s.routes.size() == 2);
  const auto& p = s.routes.at("primary");
  CHECK(p.dialect == Dialect::anthropic);
  CHECK(p.default_text == "hello from primary");
  CHECK(p.then == FaultKind::server_500);
  REQUIRE(p.steps.size() == 7);
  CHECK(p.steps[0].fault == FaultKind::rate_429);
  CHECK(p.steps[0].times == 2);
  CHECK(p.steps[0].times_given);
  CHECK(p.steps[0].retry_after_ms == 1.0);
  CHECK(p.steps[1].until_ms == 60000.0);
  CHECK_FALSE(p.steps[1].times_given);
  CHECK(p.steps[2].cut_after_events == 3);
  CHECK(p.steps[2].stall_ms == 5.0);
  CHECK(p.steps[2].inter_event_ms == 1.0);
  CHECK(p.steps[2].latency_ms == 2.0);
  CHECK(p.steps[3].first_token_ms == 7.0);
  CHECK(p.steps[3].model == "m");
  CHECK(p.steps[3].status == 203);
  CHECK(p.steps[3].text == "t");
  CHECK(p.steps[4].hold_ms == 9.0);
  CHECK(p.steps[5].p50_ms == 10.0);
  CHECK(p.steps[5].p95_ms == 20.0);
  CHECK(p.steps[6].missing_field == "label");
  CHECK(p.steps[2].pos.line == 8);
  const auto& b = s.routes.at("backup");
  CHECK(b.dialect == Dialect::openai);  // the default dialect
  CHECK(b.then == FaultKind::ok);
}

TEST_CASE("a JSON script (admin PUT) loads like TOML", "[script]") {
  const auto s = parse_script_text(
      R"({"route":{"r":{"dialect":"gemini","script":[{"fault":"stream_cut","cut_after_events":2}],"then":"ok"}}})",
      "body");
  REQUIRE(s.routes.at("r").steps.size() == 1);
  CHECK(s.routes.at("r").dialect == Dialect::gemini);
  CHECK(s.routes.at("r").steps[0].cut_after_events == 2);
  CHECK(error_of(R"({"route":)").find("f.toml: invalid JSON") == 0);
}

TEST_CASE("an unknown fault name is refused with the list of choices", "[script]") {
  CHECK(error_of(with_step(R"({ fault = "rate_430" })")) ==
        "f.toml:3:21: route.a.script[0].fault: unknown fault \"rate_430\" (expected one of: " +
            enum_choices<FaultKind>() + ")");
}

TEST_CASE("a step without a fault is refused at the step", "[script]") {
  CHECK(error_of(with_step("{ times = 2 }")) ==
        "f.toml:3:11: route.a.script[0]: missing required key \"fault\"");
}

TEST_CASE("times must be a whole number of at least 1", "[script]") {
  CHECK(error_of(with_step(R"({ fault = "ok", times = 0 })")) ==
        "f.toml:3:35: route.a.script[0].times: must be at least 1 (got 0)");
  CHECK(error_of(with_step(R"({ fault = "ok", times = 1.5 })")) ==
        "f.toml:3:35: route.a.script[0].times: expected an integer");
}

TEST_CASE("negative and non-finite durations are refused", "[script]") {
  CHECK(error_of(with_step(R"({ fault = "ok", latency_ms = -5 })")) ==
        "f.toml:3:40: route.a.script[0].latency_ms: must not be negative (got -5)");
  CHECK(error_of(with_step(R"({ fault = "ok", until_ms = nan })")) ==
        "f.toml:3:38: route.a.script[0].until_ms: must be a finite number (got nan)");
  CHECK(error_of(with_step(R"({ fault = "ok", until_ms = inf })")) ==
        "f.toml:3:38: route.a.script[0].until_ms: must be a finite number (got inf)");
  CHECK(error_of(with_step(R"({ fault = "ok", inter_event_ms = "fast" })")) ==
        "f.toml:3:44: route.a.script[0].inter_event_ms: expected a number");
  CHECK(error_of(with_step(R"({ fault = "rate_429", retry_after_ms = -1 })")) ==
        "f.toml:3:50: route.a.script[0].retry_after_ms: must not be negative (got -1)");
  CHECK(error_of(with_step(R"({ fault = "no_response", hold_ms = -1 })")) ==
        "f.toml:3:46: route.a.script[0].hold_ms: must not be negative (got -1)");
}

TEST_CASE("cut_mid_frame is stream_cut's and a boolean", "[script]") {
  CHECK(parse_script_text(with_step(R"({ fault = "stream_cut", cut_mid_frame = true })"), "f.toml")
            .routes.at("a")
            .steps.at(0)
            .cut_mid_frame);
  CHECK(
      error_of(with_step(R"({ fault = "stream_error", cut_mid_frame = true })")) ==
      "f.toml:3:53: route.a.script[0].cut_mid_frame: does not apply to fault \"stream_error\" (its own keys: "
      "cut_after_events, body)");
}

TEST_CASE("a stream fault's cut_after_events must not be negative", "[script]") {
  CHECK(error_of(with_step(R"({ fault = "stream_cut", cut_after_events = -1 })")) ==
        "f.toml:3:54: route.a.script[0].cut_after_events: must be at least 0 (got -1)");
}

TEST_CASE("status must be an HTTP status code", "[script]") {
  CHECK(error_of(with_step(R"({ fault = "auth", status = 42 })")) ==
        "f.toml:3:38: route.a.script[0].status: must be an HTTP status from 100 to 599 (got 42)");
}

TEST_CASE("a key meant for another fault is refused, naming the fault's own keys", "[script]") {
  CHECK(error_of(with_step(R"({ fault = "rate_429", cut_after_events = 2 })")) ==
        "f.toml:3:52: route.a.script[0].cut_after_events: does not apply to fault \"rate_429\" (its own "
        "keys: body)");
  CHECK(error_of(with_step(R"({ fault = "stream_cut", hold_ms = 2 })")) ==
        "f.toml:3:45: route.a.script[0].hold_ms: does not apply to fault \"stream_cut\" (its own keys: "
        "cut_after_events, cut_mid_frame)");
}

TEST_CASE("unknown keys in a step, a route and the document are refused", "[script]") {
  CHECK(error_of(with_step(R"({ fault = "ok", colour = "red" })")) ==
        "f.toml:3:36: route.a.script[0].colour: unknown key");
  CHECK(error_of("[route.a]\ndialcet = \"openai\"\n") == "f.toml:2:11: route.a.dialcet: unknown key");
  CHECK(error_of("name = \"x\"\n[route.a]\n") == "f.toml:1:8: name: unknown key");
}

TEST_CASE("route keys owned by another layer are accepted when listed", "[script]") {
  const auto doc = parse_toml("dialect = \"openai\"\nexpected_latency_ms = 800\n", "p.toml");
  const auto r = route_script_from_toml(doc, "primary", "p.toml", {"expected_latency_ms"});
  CHECK(r.name == "primary");
  CHECK(r.steps.empty());
  try {
    route_script_from_toml(doc, "primary", "p.toml");
    FAIL("an unlisted key must be refused");
  } catch (const SpecError& e) {
    CHECK(std::string(e.what()) == "p.toml:2:23: route.primary.expected_latency_ms: unknown key");
  }
}

TEST_CASE("a bad dialect and a bad then are refused with their choices", "[script]") {
  CHECK(error_of("[route.a]\ndialect = \"cohere\"\n") ==
        "f.toml:2:11: route.a.dialect: unknown value \"cohere\" (expected one of: openai, anthropic, gemini, "
        "responses, azure, bedrock)");
  CHECK(error_of("[route.a]\nthen = \"fine\"\n") ==
        "f.toml:2:8: route.a.then: unknown fault \"fine\" (expected one of: " + enum_choices<FaultKind>() +
            ")");
}

TEST_CASE("script elements must be tables and script must be an array", "[script]") {
  CHECK(error_of("[route.a]\nscript = [{ fault = \"ok\" }, \"ok\"]\n") ==
        "f.toml:2:29: route.a.script[1]: expected a table such as { fault = \"ok\" }");
  CHECK(error_of("[route.a]\nscript = \"ok\"\n") == "f.toml:2:10: route.a.script: expected an array");
}

TEST_CASE("p95_ms needs p50_ms and must not be below it", "[script]") {
  CHECK(error_of(with_step(R"({ fault = "slow", p95_ms = 5 })")) ==
        "f.toml:3:38: route.a.script[0].p95_ms: needs p50_ms");
  CHECK(error_of(with_step(R"({ fault = "slow", p50_ms = 10, p95_ms = 5 })")) ==
        "f.toml:3:51: route.a.script[0].p95_ms: must not be below p50_ms (5 < 10)");
}

TEST_CASE("empty model and missing_field strings are refused", "[script]") {
  CHECK(error_of(with_step(R"({ fault = "ok", model = "" })")) ==
        "f.toml:3:35: route.a.script[0].model: must not be empty");
  CHECK(error_of(with_step(R"({ fault = "schema_missing", missing_field = "" })")) ==
        "f.toml:3:55: route.a.script[0].missing_field: must not be empty");
}

TEST_CASE("a document without routes and a bad route name are refused", "[script]") {
  CHECK(error_of("") == "f.toml:1:1: no routes: add a [route.NAME] table with a dialect and a script");
  CHECK(error_of("[route.\"a b\"]\n").find("route.a b: a route name must be") != std::string::npos);
  CHECK(error_of("[route.__llmchaos]\n").find("must not start with \"__\"") != std::string::npos);
  CHECK(error_of("route = 1\n") == "f.toml:1:9: route: expected a table");
}

TEST_CASE("a TOML syntax error names its line and column", "[script]") {
  CHECK(error_of("[route.a]\nscript = [{ fault = }]\n").rfind("f.toml:2:", 0) == 0);
}

TEST_CASE("a missing script file is refused with its path", "[script]") {
  try {
    load_script_file("/nonexistent/llmchaos-script.toml");
    FAIL("expected an error");
  } catch (const SpecError& e) {
    CHECK(std::string(e.what()) ==
          "/nonexistent/llmchaos-script.toml: cannot open: No such file or directory");
  }
}

TEST_CASE("retry_after_form takes one of its forms; retry_info only on a gemini route",
          "[script][retry_after]") {
  const auto script =
      parse_script_text(with_step(R"({ fault = "rate_429", retry_after_form = "http_date" })"), "f.toml");
  CHECK(script.routes.at("a").steps.at(0).retry_after_form == RetryAfterForm::http_date);
  CHECK(parse_script_text(with_step(R"({ fault = "rate_429" })"), "f.toml")
            .routes.at("a")
            .steps.at(0)
            .retry_after_form == RetryAfterForm::both);
  CHECK(error_of(with_step(R"({ fault = "rate_429", retry_after_form = "minutes" })")) ==
        "f.toml:3:52: route.a.script[0].retry_after_form: unknown value \"minutes\" (expected one of: " +
            enum_choices<RetryAfterForm>() + ")");
  CHECK(error_of(with_step(R"({ fault = "rate_429", retry_after_form = "retry_info" })")) ==
        "f.toml:3:52: route.a.script[0].retry_after_form: \"retry_info\" is Gemini's body hint; this route's "
        "dialect "
        "is openai");
}

TEST_CASE("body names a real error body of the route's dialect for that fault", "[script][body]") {
  const auto ok =
      parse_script_text(with_step(R"({ fault = "quota_429", body = "credit_balance_exhausted" })"), "f.toml");
  CHECK(ok.routes.at("a").steps.at(0).body == "credit_balance_exhausted");
  CHECK(
      error_of(with_step(R"({ fault = "quota_429", body = "free_tier_limit_0" })")) ==
      "f.toml:3:41: route.a.script[0].body: openai has no quota_429 body \"free_tier_limit_0\" (its bodies: "
      "credit_balance_exhausted, organization_spend_limit_exceeded, project_spend_limit_exceeded, "
      "organization_usage_limit_exceeded, billing_hard_limit_reached)");
  CHECK(error_of(with_step(R"({ fault = "overloaded", body = "x" })")) ==
        "f.toml:3:42: route.a.script[0].body: openai has no overloaded body \"x\" (its bodies: none)");
  CHECK(
      error_of(with_step(R"({ fault = "connect_reset", body = "x" })")) ==
      "f.toml:3:45: route.a.script[0].body: does not apply to fault \"connect_reset\" (its own keys: none)");
}
