// The Amazon Bedrock dialect on the wire (127.0.0.1, ephemeral port): Converse and InvokeModel, plain and
// as AWS event streams read back with the one codec (core eventstream.hpp), the exceptions before and in
// a stream, a bad CRC, and the credential check.
#include <catch2/catch.hpp>

#include "llmchaos/core/base64.hpp"
#include "llmchaos/core/eventstream.hpp"
#include "llmchaos/core/spec_error.hpp"
#include "server_fixture.hpp"

using namespace llmchaos;
using namespace llmchaos::test;
namespace json = boost::json;

namespace {
constexpr const char* model_path = "/r/model/anthropic.claude-3-haiku-20240307-v1%3A0/";
constexpr const char* converse_body = R"({"messages":[{"role":"user","content":[{"text":"hi there"}]}]})";
constexpr const char* invoke_body =
    R"({"anthropic_version":"bedrock-2023-05-31","max_tokens":64,"messages":[{"role":"user","content":"hi there"}]})";
const std::vector<std::pair<std::string, std::string>> sigv4 = {
    {"authorization",
     "AWS4-HMAC-SHA256 Credential=x/20261206/us-east-1/bedrock/aws4_request, SignedHeaders=host, "
     "Signature=ab"}};

TestServer& bedrock(TestServer& s, const std::string& steps, const std::string& extra = {}) {
  s.install("", route_toml(Dialect::bedrock, steps, extra));
  return s;
}

WireReply call(TestServer& s, const std::string& op, const std::string& body = converse_body,
               const std::vector<std::pair<std::string, std::string>>& headers = {}) {
  return s.send("POST", model_path + op, body, headers);
}

// Every whole message of a body, and the decoder's verdict on what is left.
struct Frames {
  std::vector<eventstream::Message> messages;
  eventstream::DecodeError error = eventstream::DecodeError::none;
  std::size_t left = 0;
  std::vector<std::string> types() const {
    std::vector<std::string> out;
    for (const auto& m : messages)
      out.emplace_back(m.text(":message-type") == "event" ? m.text(":event-type")
                                                          : m.text(":exception-type"));
    return out;
  }
};
Frames frames_of(const std::string& body) {
  eventstream::Decoder d;
  d.feed(body);
  Frames f;
  while (auto m = d.next()) f.messages.push_back(std::move(*m));
  f.error = d.error();
  f.left = d.buffered();
  return f;
}

std::string deltas_joined(const Frames& f) {
  std::string text;
  for (const auto& m : f.messages)
    if (m.text(":event-type") == "contentBlockDelta")
      text += json::value_to<std::string>(json::parse(m.payload).at("delta").at("text"));
  return text;
}
}  // namespace

TEST_CASE("bedrock converse answers the Converse JSON for the decoded model id", "[bedrock]") {
  TestServer s;
  bedrock(s, R"({ fault = "ok" })");
  const auto r = call(s, "converse");
  REQUIRE(r.status == 200);
  CHECK(r.header("content-type") == "application/json");
  CHECK(r.has_header("x-amzn-requestid"));
  const auto v = r.json();
  CHECK(v.at("output").at("message").at("role") == "assistant");
  CHECK(v.at("output").at("message").at("content").at(0).at("text") == "alpha beta gamma delta");
  CHECK(v.at("stopReason") == "end_turn");
  CHECK(v.at("usage").at("outputTokens") == 4);
  CHECK(v.at("usage").at("totalTokens").as_int64() ==
        v.at("usage").at("inputTokens").as_int64() + v.at("usage").at("outputTokens").as_int64());
  CHECK(v.at("metrics").at("latencyMs").is_number());
  const auto l = s.ledger("", 1);
  REQUIRE(l.size() == 1);
  CHECK(l[0].dialect == Dialect::bedrock);
  CHECK(l[0].model == "anthropic.claude-3-haiku-20240307-v1:0");
  CHECK_FALSE(l[0].stream);
}

TEST_CASE("bedrock converse-stream is an event stream whose deltas join to the text", "[bedrock]") {
  TestServer s;
  bedrock(s, R"({ fault = "ok" })");
  const auto r = call(s, "converse-stream");
  REQUIRE(r.status == 200);
  CHECK(r.header("content-type") == "application/vnd.amazon.eventstream");
  const auto f = frames_of(r.body);
  CHECK(f.error == eventstream::DecodeError::none);
  CHECK(f.left == 0);
  CHECK(f.types() == std::vector<std::string>{"messageStart", "contentBlockDelta", "contentBlockDelta",
                                              "contentBlockDelta", "contentBlockDelta", "contentBlockStop",
                                              "messageStop", "metadata"});
  CHECK(deltas_joined(f) == "alpha beta gamma delta");
  for (const auto& m : f.messages) CHECK(m.text(":content-type") == "application/json");
  CHECK(json::parse(f.messages[0].payload).at("role") == "assistant");
  CHECK(json::parse(f.messages[6].payload).at("stopReason") == "end_turn");
  CHECK(json::parse(f.messages[7].payload).at("usage").at("outputTokens") == 4);
  CHECK(s.ledger("", 1).at(0).stream);
}

TEST_CASE("bedrock invoke answers Anthropic's body, invoke-with-response-stream base64 chunks of its events",
          "[bedrock]") {
  TestServer s;
  bedrock(s, R"({ fault = "ok", times = 2 })");
  const auto plain = call(s, "invoke", invoke_body);
  REQUIRE(plain.status == 200);
  CHECK(plain.json().at("type") == "message");
  CHECK(plain.json().at("content").at(0).at("text") == "alpha beta gamma delta");
  const auto r = call(s, "invoke-with-response-stream", invoke_body);
  REQUIRE(r.status == 200);
  const auto f = frames_of(r.body);
  REQUIRE(f.error == eventstream::DecodeError::none);
  std::string text;
  std::vector<std::string> types;
  for (const auto& m : f.messages) {
    CHECK(m.text(":event-type") == "chunk");
    const auto event =
        json::parse(base64::decode(json::value_to<std::string>(json::parse(m.payload).at("bytes"))).value());
    types.push_back(json::value_to<std::string>(event.at("type")));
    if (event.at("type") == "content_block_delta")
      text += json::value_to<std::string>(event.at("delta").at("text"));
    if (event.at("type") == "message_stop") CHECK(event.at("amazon-bedrock-invocationMetrics").is_object());
  }
  CHECK(text == "alpha beta gamma delta");
  CHECK(types.front() == "message_start");
  CHECK(types.back() == "message_stop");
}

TEST_CASE("bedrock answers a tool call when tools are offered, the text after the tool result", "[bedrock]") {
  TestServer s;
  bedrock(s, R"({ fault = "ok", times = 3 })");
  const std::string tools =
      R"("toolConfig":{"tools":[{"toolSpec":{"name":"lookup","inputSchema":{"json":{}}}}]})";
  const auto r =
      call(s, "converse", R"({"messages":[{"role":"user","content":[{"text":"hi"}]}],)" + tools + "}");
  REQUIRE(r.status == 200);
  CHECK(r.json().at("stopReason") == "tool_use");
  CHECK(r.json().at("output").at("message").at("content").at(0).at("toolUse").at("name") == "lookup");
  const auto f = frames_of(
      call(s, "converse-stream", R"({"messages":[{"role":"user","content":[{"text":"hi"}]}],)" + tools + "}")
          .body);
  CHECK(f.types() == std::vector<std::string>{"messageStart", "contentBlockStart", "contentBlockDelta",
                                              "contentBlockStop", "messageStop", "metadata"});
  const auto after = call(
      s, "converse",
      R"({"messages":[{"role":"user","content":[{"toolResult":{"toolUseId":"t","content":[{"text":"ok"}]}}]}],)" +
          tools + "}");
  CHECK(after.json().at("stopReason") == "end_turn");
}

TEST_CASE("bedrock errors before a stream: status, x-amzn-ErrorType and a JSON message", "[bedrock]") {
  struct Row {
    const char* step;
    int status;
    const char* type;
  };
  const Row rows[] = {
      {R"({ fault = "rate_429" })", 429, "ThrottlingException"},
      {R"({ fault = "rate_429", body = "model_not_ready" })", 429, "ModelNotReadyException"},
      {R"({ fault = "quota_429" })", 400, "ServiceQuotaExceededException"},
      {R"({ fault = "payment_402" })", 403, "AccessDeniedException"},
      {R"({ fault = "overloaded" })", 503, "ServiceUnavailableException"},
      {R"({ fault = "overloaded", body = "model_timeout" })", 408, "ModelTimeoutException"},
      {R"({ fault = "server_500" })", 500, "InternalServerException"},
      {R"({ fault = "server_500_context" })", 500, "InternalServerException"},
      {R"({ fault = "bad_request" })", 400, "ValidationException"},
      {R"({ fault = "auth" })", 403, "AccessDeniedException"},
      {R"({ fault = "policy" })", 400, "ValidationException"},
      {R"({ fault = "stream_error", body = "modelStreamErrorException" })", 424, "ModelStreamErrorException"},
  };
  for (const auto& row : rows) {
    for (const char* op : {"converse", "converse-stream"}) {
      // policy and stream_error are in-stream on a stream (below)
      const bool in_stream = std::string_view(row.step).find("policy") != std::string_view::npos ||
                             std::string_view(row.step).find("stream_error") != std::string_view::npos;
      if (in_stream && std::string_view(op) == "converse-stream") continue;
      CAPTURE(row.step, op);
      TestServer s;
      bedrock(s, row.step);
      const auto r = call(s, op);
      CHECK(r.status == row.status);
      CHECK(r.header("x-amzn-errortype")
                .rfind(std::string(row.type) + ":http://internal.amazon.com/coral/", 0) == 0);
      CHECK(r.header("content-type") == "application/json");
      CHECK(r.json().at("message").is_string());
    }
  }
}

TEST_CASE("bedrock's throttle hint is x-amz-retry-after in ms, ledgered as amz_ms", "[bedrock]") {
  TestServer s;
  bedrock(s, R"({ fault = "rate_429" }, { fault = "rate_429", retry_after_ms = 2500 },
                { fault = "rate_429", retry_after_form = "both" })");
  const auto first = call(s, "converse");
  CHECK(first.header("x-amz-retry-after") == "1000");
  CHECK_FALSE(first.has_header("retry-after"));
  CHECK(call(s, "converse").header("x-amz-retry-after") == "2500");
  const auto both = call(s, "converse");
  CHECK(both.header("retry-after") == "1");
  CHECK_FALSE(both.has_header("x-amz-retry-after"));
  const auto l = s.ledger("", 3);
  REQUIRE(l.size() == 3);
  CHECK(l[0].retry_after_form == "amz_ms");
  CHECK(l[0].retry_after_sent_ms == Approx(1000));
  CHECK(l[1].retry_after_sent_ms == Approx(2500));
  CHECK(l[2].retry_after_form == "both");
}

TEST_CASE("bedrock stream_error sends an exception frame, the default serviceUnavailableException",
          "[bedrock]") {
  const std::pair<const char*, const char*> rows[] = {
      {R"({ fault = "stream_error" })", "serviceUnavailableException"},
      {R"({ fault = "stream_error", body = "throttlingException", cut_after_events = 2 })",
       "throttlingException"},
      {R"({ fault = "stream_error", body = "modelStreamErrorException" })", "modelStreamErrorException"},
      {R"({ fault = "stream_error", body = "internalServerException" })", "internalServerException"},
      {R"({ fault = "stream_error", body = "validationException" })", "validationException"},
  };
  for (const auto& [step, name] : rows) {
    CAPTURE(step);
    TestServer s;
    bedrock(s, step);
    const auto r = call(s, "converse-stream");
    REQUIRE(r.status == 200);
    CHECK(r.complete);
    const auto f = frames_of(r.body);
    REQUIRE(f.error == eventstream::DecodeError::none);
    const auto& last = f.messages.back();
    CHECK(last.text(":message-type") == "exception");
    CHECK(last.text(":exception-type") == name);
    CHECK(json::parse(last.payload).at("message").is_string());
    CHECK(deltas_joined(f) ==
          (std::string_view(step).find("= 2") != std::string_view::npos ? "alpha beta " : "alpha "));
  }
}

TEST_CASE(
    "bedrock malformed_event is a frame with a wrong CRC, stream_cut and no_terminator end without "
    "messageStop",
    "[bedrock]") {
  TestServer s;
  bedrock(s, R"({ fault = "malformed_event" }, { fault = "stream_cut", cut_after_events = 2 },
                { fault = "no_terminator" }, { fault = "policy", cut_after_events = 1 })");
  const auto bad = frames_of(call(s, "converse-stream").body);
  CHECK(bad.error == eventstream::DecodeError::message_crc);
  CHECK(bad.types() == std::vector<std::string>{"messageStart", "contentBlockDelta"});
  const auto cut = call(s, "converse-stream");
  CHECK_FALSE(cut.complete);
  const auto c = frames_of(cut.body);
  CHECK(c.types() == std::vector<std::string>{"messageStart", "contentBlockDelta", "contentBlockDelta"});
  const auto no_end = call(s, "converse-stream");
  CHECK(no_end.complete);
  const auto n = frames_of(no_end.body);
  CHECK(n.error == eventstream::DecodeError::none);
  CHECK(n.types().back() == "contentBlockStop");
  CHECK(deltas_joined(n) == "alpha beta gamma delta");
  const auto p = frames_of(call(s, "converse-stream").body);
  CHECK(json::parse(p.messages.at(p.messages.size() - 2).payload).at("stopReason") == "content_filtered");
}

TEST_CASE(
    "bedrock with require_auth wants a SigV4 (or Bearer) Authorization and refuses with "
    "AccessDeniedException",
    "[bedrock]") {
  TestServer s;
  bedrock(s, R"({ fault = "ok" })", "require_auth = true\n");
  const auto none = call(s, "converse");
  CHECK(none.status == 403);
  CHECK(none.header("x-amzn-errortype").rfind("AccessDeniedException:", 0) == 0);
  CHECK(none.json() == json::parse(R"({"Message":"Authorization header is missing"})"));
  CHECK(call(s, "converse", converse_body, {{"authorization", "AWS4-HMAC-SHA256"}}).status == 403);
  CHECK(call(s, "converse", converse_body, sigv4).status == 200);
  CHECK(call(s, "converse", converse_body, {{"authorization", "Bearer bedrock-api-key-x"}}).status == 200);
  const auto l = s.ledger("", 4);
  REQUIRE(l.size() == 4);
  CHECK(l[0].missing_credential);
  CHECK_FALSE(l[2].missing_credential);
}

TEST_CASE("bedrock refuses an unknown operation or a path outside /model/{id}/ as a bad request",
          "[bedrock]") {
  TestServer s;
  bedrock(s, R"({ fault = "ok" })");
  CHECK(s.send("POST", "/r/model/m/chat", converse_body).status == 404);
  CHECK(s.send("POST", "/r/model//converse", converse_body).status == 404);
  CHECK(s.send("GET", "/r/model/m/converse").status == 405);
  CHECK(s.send("POST", "/r/model/m/converse", "{").status == 400);
}

TEST_CASE("a stream_error body names one of the dialect's in-stream exceptions, file:line:col otherwise",
          "[bedrock][script]") {
  const auto error_of = [](const std::string& dialect, const std::string& step) -> std::string {
    try {
      mock::parse_script_text("[route.a]\ndialect = \"" + dialect + "\"\nscript = [" + step + "]\n",
                              "f.toml");
    } catch (const SpecError& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK(error_of("bedrock", R"({ fault = "stream_error", body = "throttlingException" })") == "no error");
  CHECK(error_of("bedrock", R"({ fault = "stream_error", body = "ThrottlingException" })") ==
        "f.toml:3:44: route.a.script[0].body: bedrock has no stream_error body \"ThrottlingException\" (its "
        "bodies: serviceUnavailableException, throttlingException, modelStreamErrorException, "
        "internalServerException, validationException)");
  CHECK(error_of("openai", R"({ fault = "stream_error", body = "throttlingException" })") ==
        "f.toml:3:44: route.a.script[0].body: openai has no stream_error body \"throttlingException\" (its "
        "bodies: none)");
}

TEST_CASE("malformed_event's body names a stop reason: the whole answer stops as malformed output",
          "[bedrock]") {
  TestServer s;
  bedrock(s, R"({ fault = "malformed_event", body = "malformed_model_output", times = 2 })");
  const auto plain = call(s, "converse");
  REQUIRE(plain.status == 200);
  const auto v = plain.json();
  CHECK(v.at("stopReason") == "malformed_model_output");
  CHECK(v.at("output").at("message").at("content").as_array()[0].at("text") == "alpha beta gamma delta");
  const auto f = frames_of(call(s, "converse-stream").body);
  CHECK(f.error == eventstream::DecodeError::none);  // every frame whole: the stop reason says it
  REQUIRE(f.messages.size() >= 2);
  CHECK(json::parse(f.messages[f.messages.size() - 2].payload).at("stopReason") == "malformed_model_output");
  const auto l = s.ledger("", 2);
  CHECK(l[0].fault == FaultKind::malformed_event);
  CHECK_FALSE(l[0].committed);  // nothing of a plain answer the client can use reached it
  try {
    mock::parse_script_text(
        "[route.a]\ndialect = \"openai\"\nscript = [{ fault = \"malformed_event\", body = "
        "\"malformed_model_output\" }]\n",
        "f.toml");
    FAIL("openai has no malformed_event body");
  } catch (const SpecError& e) {
    CHECK(
        std::string(e.what()) ==
        "f.toml:3:47: route.a.script[0].body: openai has no malformed_event body \"malformed_model_output\" "
        "(its bodies: none)");
  }
}

TEST_CASE("the ledger keeps the AWS SDKs' amz-sdk-invocation-id and amz-sdk-request, only when sent",
          "[bedrock]") {
  TestServer s;
  bedrock(s, R"({ fault = "rate_429" }, { fault = "ok" })");
  call(s, "converse", converse_body,
       {{"amz-sdk-invocation-id", "inv-1"}, {"amz-sdk-request", "attempt=1; max=3"}});
  call(s, "converse", converse_body,
       {{"amz-sdk-invocation-id", "inv-1"}, {"amz-sdk-request", "attempt=2; max=3"}});
  call(s, "converse");
  const auto l = s.ledger("", 3);
  REQUIRE(l.size() == 3);
  CHECK(l[0].amz_sdk_invocation_id == "inv-1");
  CHECK(l[1].amz_sdk_invocation_id == "inv-1");
  CHECK(l[0].amz_sdk_request == "attempt=1; max=3");
  CHECK(l[1].amz_sdk_request == "attempt=2; max=3");
  const auto back = ledger_from_json(ledger_to_json(l));
  CHECK(back[1].amz_sdk_request == "attempt=2; max=3");
  CHECK(back[1].amz_sdk_invocation_id == "inv-1");
  CHECK(ledger_to_json({l[2]}).find("amz_sdk") == std::string::npos);
}

TEST_CASE("bedrock stream_cut with cut_mid_frame closes inside a frame: the decoder waits for the rest",
          "[bedrock]") {
  TestServer s;
  bedrock(s, R"({ fault = "stream_cut", cut_after_events = 2, cut_mid_frame = true },
                { fault = "stream_cut", cut_after_events = 4, cut_mid_frame = true })");
  const auto r = call(s, "converse-stream");
  CHECK_FALSE(r.complete);
  const auto f = frames_of(r.body);
  CHECK(f.error == eventstream::DecodeError::none);  // not broken: incomplete
  CHECK(f.types() == std::vector<std::string>{"messageStart", "contentBlockDelta", "contentBlockDelta"});
  CHECK(f.left > 0);
  CHECK(deltas_joined(f) == "alpha beta ");
  const auto all = frames_of(call(s, "converse-stream").body);  // after the last delta: half the block stop
  CHECK(all.types().back() == "contentBlockDelta");
  CHECK(all.left > 0);
  const auto l = s.ledger("", 2);
  REQUIRE(l.size() == 2);
  CHECK(l[0].outcome == AttemptOutcome::cut);
  CHECK(l[0].events_sent == 2);
}
