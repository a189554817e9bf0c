// The Azure OpenAI dialect on the wire (127.0.0.1, ephemeral port): its routes, its own error bodies and
// retry hints, and the content-filter annotations of its answers.
#include <catch2/catch.hpp>

#include "server_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::test;
namespace json = boost::json;

namespace {
constexpr const char* body = R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi there"}]})";
constexpr const char* stream_body =
    R"({"model":"gpt-4o","messages":[{"role":"user","content":"hi there"}],"stream":true})";
const std::string deployment_path = "/r/openai/deployments/dep-1/chat/completions?api-version=2024-10-21";

TestServer& azure_server(TestServer& s, const std::string& steps) {
  s.install("", route_toml(Dialect::azure, steps));
  return s;
}
}  // namespace

TEST_CASE("azure serves the deployment route with api-version and answers for the deployment the path names",
          "[azure]") {
  TestServer s;
  azure_server(s, R"({ fault = "ok" })");
  const auto r = s.send("POST", deployment_path, body, {{"api-key", "k"}});
  REQUIRE(r.status == 200);
  const auto v = r.json();
  CHECK(v.at("object") == "chat.completion");
  CHECK(v.at("model") == "dep-1");
  CHECK(v.at("choices").at(0).at("message").at("content") == "alpha beta gamma delta");
  const auto l = s.ledger("", 1);
  REQUIRE(l.size() == 1);
  CHECK(l[0].dialect == Dialect::azure);
  CHECK(l[0].model == "dep-1");
  CHECK(l[0].path == "/openai/deployments/dep-1/chat/completions?api-version=2024-10-21");
}

TEST_CASE(
    "azure without api-version answers 404 Resource not found as the real service does, and takes no step",
    "[azure]") {
  TestServer s;
  azure_server(s, R"({ fault = "rate_429" })");
  const auto r = s.send("POST", "/r/openai/deployments/dep-1/chat/completions", body);
  CHECK(r.status == 404);
  CHECK(r.json() == json::parse(R"({"error":{"code":"404","message":"Resource not found"}})"));
  CHECK(s.send("POST", "/r/openai/deployments/dep-1/chat/completions?api-version=", body).status == 404);
  CHECK(s.send("POST", "/r/openai/deployments//chat/completions?api-version=2024-10-21", body).status == 404);
  CHECK(s.send("POST", "/r/v1/chat/completions", body).status == 404);
  // The script's first step is still there for the first real request.
  CHECK(s.send("POST", deployment_path, body).status == 429);
}

TEST_CASE("azure's v1 surface takes the deployment from the body's model, with or without api-version",
          "[azure]") {
  TestServer s;
  azure_server(s, R"({ fault = "ok", times = 2 })");
  const auto r = s.send("POST", "/r/openai/v1/chat/completions", body);
  REQUIRE(r.status == 200);
  CHECK(r.json().at("model") == "gpt-4o");
  CHECK(s.send("POST", "/r/openai/v1/chat/completions?api-version=preview", body).status == 200);
  const auto models = s.send("GET", "/r/openai/v1/models");
  CHECK(models.status == 200);
  CHECK(models.json().at("object") == "list");
  CHECK(s.send("GET", deployment_path).status == 405);
}

TEST_CASE(
    "azure rate_429 is Azure's 429 body naming the operation and the wait, with retry-after-ms and "
    "retry-after",
    "[azure]") {
  TestServer s;
  azure_server(s, R"({ fault = "rate_429", retry_after_ms = 2500 })");
  const auto r = s.send("POST", deployment_path, body);
  CHECK(r.status == 429);
  CHECK(r.header("retry-after-ms") == "2500");
  CHECK(r.header("retry-after") == "3");
  const auto e = r.json().at("error");
  CHECK(e.at("code") == "429");
  const std::string message(e.at("message").as_string());
  CHECK(message.find(
            "Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21") ==
        0);
  CHECK(message.find("Please retry after 3 seconds.") != std::string::npos);
}

TEST_CASE("azure quota, auth and content filter answer Azure's own bodies", "[azure]") {
  TestServer s;
  azure_server(
      s, R"({ fault = "quota_429" }, { fault = "auth" }, { fault = "policy" }, { fault = "server_500" })");
  const auto quota = s.send("POST", deployment_path, body);
  CHECK(quota.status == 429);
  CHECK_FALSE(quota.has_header("retry-after"));
  CHECK(quota.json().at("error").at("code") == "insufficient_quota");
  const auto auth = s.send("POST", deployment_path, body);
  CHECK(auth.status == 401);
  CHECK(auth.json().at("error").at("code") == "401");
  CHECK(std::string(auth.json().at("error").at("message").as_string())
            .find("Access denied due to invalid subscription key") == 0);
  const auto policy = s.send("POST", deployment_path, body);
  CHECK(policy.status == 400);
  const auto e = policy.json().at("error");
  CHECK(e.at("code") == "content_filter");
  CHECK(e.at("innererror").at("code") == "ResponsibleAIPolicyViolation");
  CHECK(e.at("innererror").at("content_filter_result").at("violence").at("filtered") == true);
  CHECK(e.at("innererror").at("content_filter_result").at("hate").at("severity") == "safe");
  // The model backend's errors are OpenAI's.
  const auto server = s.send("POST", deployment_path, body);
  CHECK(server.status == 500);
  CHECK(server.json().at("error").at("type") == "server_error");
}

TEST_CASE("azure answers carry prompt_filter_results and each choice's content_filter_results", "[azure]") {
  TestServer s;
  azure_server(s, R"({ fault = "ok" })");
  const auto v = s.send("POST", deployment_path, body).json();
  CHECK(v.at("prompt_filter_results").at(0).at("prompt_index") == 0);
  CHECK(v.at("prompt_filter_results").at(0).at("content_filter_results").at("jailbreak").at("detected") ==
        false);
  CHECK(v.at("choices").at(0).at("content_filter_results").at("sexual").at("filtered") == false);
  CHECK(v.at("choices").at(0).at("finish_reason") == "stop");
}

TEST_CASE(
    "an azure stream opens with the prompt filter chunk, annotates every content chunk and ends with [DONE]",
    "[azure]") {
  TestServer s;
  azure_server(s, R"({ fault = "ok" }, { fault = "policy", cut_after_events = 2 })");
  const auto r = s.send("POST", deployment_path, stream_body);
  REQUIRE(r.status == 200);
  const auto events = sse_events(r.body);
  REQUIRE(events.size() >= 4);
  const auto first = json::parse(events[0].data);
  CHECK(first.at("choices").as_array().empty());
  CHECK(first.at("id") == "");
  CHECK(first.at("prompt_filter_results").at(0).at("content_filter_results").at("hate").at("severity") ==
        "safe");
  std::string text;
  for (const auto& e : events) {
    if (e.data == "[DONE]") continue;
    const auto chunk = json::parse(e.data);
    if (const auto t = event_text(Dialect::azure, e); !t.empty()) {
      text += t;
      CHECK(chunk.at("choices").at(0).at("content_filter_results").at("violence").at("severity") == "safe");
    }
  }
  CHECK(text == "alpha beta gamma delta");
  CHECK(events.back().data == "[DONE]");
  // policy: two tokens, then the finish chunk says content_filter with the flagged category.
  const auto stopped = sse_events(s.send("POST", deployment_path, stream_body).body);
  bool flagged = false;
  for (const auto& e : stopped) {
    if (e.data == "[DONE]") continue;
    const auto chunk = json::parse(e.data);
    const auto& choices = chunk.at("choices").as_array();
    if (!choices.empty() && choices[0].at("finish_reason") == "content_filter")
      flagged = choices[0].at("content_filter_results").at("violence").at("filtered") == true;
  }
  CHECK(flagged);
}
