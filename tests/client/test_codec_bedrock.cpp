// The Amazon Bedrock codec (Converse, ConverseStream): the request as the AWS SDKs send it, the plain
// answer, the event stream read frame by frame through ResponseReader (split at every byte, a bad
// checksum, no messageStop, exception frames), and the classifier's reading of Bedrock's exceptions.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <regex>
#include <string>
#include <vector>

#include "llmchaos/client/classifier.hpp"
#include "llmchaos/client/dialect_codec.hpp"
#include "llmchaos/client/response_reader.hpp"
#include "llmchaos/core/eventstream.hpp"

using namespace llmchaos;
using namespace llmchaos::client;
namespace json = boost::json;
namespace es = llmchaos::eventstream;

namespace {

const DialectCodec& codec() {
  return codec_for(Dialect::bedrock);
}

AttemptRequest request(bool stream) {
  AttemptRequest req;
  req.endpoint = Endpoint{"primary", Dialect::bedrock, "http://127.0.0.1:1/ns/primary"};
  req.stream = stream;
  req.model = "anthropic.claude-3-haiku-20240307-v1:0";
  req.prompt = "classify this";
  req.operation_id = "op-00000000000000aa";
  req.max_attempts = 3;
  return req;
}

std::string header(const Headers& headers, std::string_view name) {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return {};
}

std::string event(std::string_view type, const json::object& payload) {
  return es::encode(es::event(type, json::serialize(payload)));
}

// A whole ConverseStream answer: "alpha beta" in two deltas, then messageStop and metadata.
std::string stream_body(bool with_stop = true) {
  std::string body = event("messageStart", {{"role", "assistant"}}) +
                     event("contentBlockDelta", {{"delta", {{"text", "alpha "}}}, {"contentBlockIndex", 0}}) +
                     event("contentBlockDelta", {{"delta", {{"text", "beta"}}}, {"contentBlockIndex", 0}}) +
                     event("contentBlockStop", {{"contentBlockIndex", 0}});
  if (with_stop) body += event("messageStop", {{"stopReason", "end_turn"}});
  return body + event("metadata", {{"usage", {{"inputTokens", 5}, {"outputTokens", 2}, {"totalTokens", 7}}},
                                   {"metrics", {{"latencyMs", 12}}}});
}

struct Read {
  AttemptResult result;
  std::vector<std::string> tokens;
  bool stopped = false;
};

// The body fed in two pieces split at `split` (npos: whole), then ended cleanly.
Read read(const std::string& body, std::size_t split = std::string::npos) {
  const AttemptRequest req = request(true);
  Read out;
  const ResponseReader::TokenFn on_token = [&](std::string_view t) { out.tokens.emplace_back(t); };
  ResponseReader reader(req, on_token);
  reader.head(200, {{"content-type", "application/vnd.amazon.eventstream"}});
  if (split < body.size()) {
    reader.feed(std::string_view(body).substr(0, split));
    reader.feed(std::string_view(body).substr(split));
  } else {
    reader.feed(body);
  }
  out.stopped = reader.stopped();
  reader.end();
  out.result = reader.take();
  return out;
}

Classification classify_result(const AttemptResult& r, int visible) {
  Observation obs;
  obs.dialect = Dialect::bedrock;
  obs.status = r.status;
  obs.body = r.body;
  obs.headers = r.headers;
  obs.event = r.event;
  obs.visible_tokens = visible;
  obs.finish_reason = r.finish_reason;
  obs.error_type = r.error_type;
  return classify(obs);
}

Classification classify_error(int status, std::string type, std::string message,
                              std::vector<std::pair<std::string, std::string>> extra = {}) {
  Observation obs;
  obs.dialect = Dialect::bedrock;
  obs.status = status;
  obs.body = json::serialize(json::object{{"message", message}});
  obs.headers = {{"content-type", "application/json"}, {"x-amzn-errortype", std::move(type)}};
  for (auto& h : extra) obs.headers.push_back(std::move(h));
  return classify(obs);
}

}  // namespace

TEST_CASE("bedrock codec: Converse and ConverseStream requests as the AWS SDKs build them", "[bedrock]") {
  auto req = request(false);
  CHECK(codec().target(req) == "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse");
  req.stream = true;
  CHECK(codec().target(req) == "/model/anthropic.claude-3-haiku-20240307-v1%3A0/converse-stream");

  const auto body = json::parse(codec().request_body(req));
  CHECK(body.at("messages").at(0).at("role") == "user");
  CHECK(body.at("messages").at(0).at("content").at(0).at("text") == "classify this");
  CHECK(body.at("inferenceConfig").at("maxTokens").to_number<int>() > 0);
  CHECK(!body.as_object().contains("toolConfig"));

  req.tool_call = true;
  req.prefill = true;
  const auto tools = json::parse(codec().request_body(req));
  CHECK(tools.at("toolConfig").at("tools").at(0).at("toolSpec").at("name").as_string() == workflow_tool_name);
  CHECK(tools.at("toolConfig").at("tools").at(0).at("toolSpec").at("inputSchema").at("json").at("type") ==
        "object");
  CHECK(tools.at("messages").at(1).at("role") == "assistant");  // the prefill
}

TEST_CASE("bedrock codec: SigV4-shaped authorization, one invocation id per call, the attempt count",
          "[bedrock]") {
  auto req = request(true);
  const Headers first = request_headers(req, "AKIDEXAMPLE");
  req.attempt_number = 1;
  const Headers second = request_headers(req, "AKIDEXAMPLE");

  static const std::regex sigv4(
      "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/[0-9]{8}/[a-z0-9-]+/bedrock/aws4_request, "
      "SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}");
  CHECK(std::regex_match(header(first, "authorization"), sigv4));
  static const std::regex uuid("[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}");
  CHECK(std::regex_match(header(first, "amz-sdk-invocation-id"), uuid));
  CHECK(header(first, "amz-sdk-invocation-id") == header(second, "amz-sdk-invocation-id"));
  CHECK(header(first, "amz-sdk-request") == "attempt=1; max=3");
  CHECK(header(second, "amz-sdk-request") == "attempt=2; max=3");
  CHECK(header(first, "x-amz-date").size() == 16);

  req.operation_id = "op-00000000000000bb";  // another logical call
  CHECK(header(request_headers(req, "AKIDEXAMPLE"), "amz-sdk-invocation-id") !=
        header(first, "amz-sdk-invocation-id"));
}

TEST_CASE("bedrock codec: a Converse answer", "[bedrock]") {
  const std::string body = json::serialize(json::object{
      {"output",
       {{"message", {{"role", "assistant"}, {"content", json::array{json::object{{"text", "alpha"}}}}}}}},
      {"stopReason", "end_turn"},
      {"usage", {{"inputTokens", 4}, {"outputTokens", 1}, {"totalTokens", 5}}}});
  Answer a;
  REQUIRE(codec().parse_answer(body, a));
  CHECK(a.text == "alpha");
  CHECK(a.finish_reason == "end_turn");
  CHECK(a.input_tokens == 4);
  CHECK(a.output_tokens == 1);

  const std::string tool = json::serialize(json::object{
      {"output",
       {{"message",
         {{"role", "assistant"},
          {"content",
           json::array{json::object{
               {"toolUse",
                {{"toolUseId", "tu-1"}, {"name", "record_label"}, {"input", {{"label", "x"}}}}}}}}}}}},
      {"stopReason", "tool_use"}});
  Answer t;
  REQUIRE(codec().parse_answer(tool, t));
  CHECK(t.tool_call);
  CHECK(t.tool_call_id == "tu-1");
  CHECK(json::parse(t.tool_arguments).at("label") == "x");
  Answer bad;
  CHECK_FALSE(codec().parse_answer(R"({"message":"no output"})", bad));
}

TEST_CASE("bedrock stream: frames split at every byte read the same", "[bedrock]") {
  const std::string body = stream_body();
  for (std::size_t split = 0; split <= body.size(); ++split) {
    const auto r = read(body, split);
    INFO("split at " << split);
    REQUIRE(r.result.event == TransportEvent::none);
    CHECK(r.result.text == "alpha beta");
    CHECK(r.tokens == std::vector<std::string>{"alpha ", "beta"});
    CHECK(r.result.terminated);
    CHECK(r.result.finish_reason == "end_turn");
    CHECK(r.result.output_tokens == 2);
    CHECK(r.result.model == "anthropic.claude-3-haiku-20240307-v1:0");  // Converse names none
  }
  // One byte at a time.
  const AttemptRequest req = request(true);
  int tokens = 0;
  const ResponseReader::TokenFn on_token = [&](std::string_view) { ++tokens; };
  ResponseReader reader(req, on_token);
  reader.head(200, {{"content-type", "application/vnd.amazon.eventstream"}});
  for (char c : body) REQUIRE(reader.feed(std::string_view(&c, 1)));
  reader.end();
  CHECK(reader.take().text == "alpha beta");
  CHECK(tokens == 2);
}

TEST_CASE("bedrock stream: a wrong checksum or length is a malformed event", "[bedrock]") {
  const std::string good = stream_body();
  const std::string first = event("messageStart", {{"role", "assistant"}});
  std::string crc = good;
  crc[first.size() + 20] ^= 0x01;  // a payload byte of the first delta: its message CRC fails
  auto r = read(crc);
  CHECK(r.stopped);
  CHECK(r.result.event == TransportEvent::malformed_event);
  CHECK_THAT(r.result.error, Catch::Contains("message checksum mismatch"));
  CHECK(r.tokens.empty());
  CHECK(classify_result(r.result, 0).owner == Owner::transient);

  std::string length = good;
  length[first.size() + 3] ^= 0x10;  // the second frame's total length: its prelude CRC fails
  r = read(length);
  CHECK(r.result.event == TransportEvent::malformed_event);
}

TEST_CASE("bedrock stream: no messageStop is a missing terminator", "[bedrock]") {
  const auto r = read(stream_body(false));
  CHECK(r.result.event == TransportEvent::missing_terminator);
  CHECK(r.result.text == "alpha beta");
  // A cut inside the last frame, the body otherwise ended cleanly: the same.
  const std::string cut = stream_body().substr(0, stream_body().size() - 5);
  CHECK(read(cut).result.event == TransportEvent::none);  // messageStop was read: the answer is whole
  const std::string early = stream_body(false);
  CHECK(read(early.substr(0, early.size() - 3)).result.event == TransportEvent::missing_terminator);
}

TEST_CASE("bedrock stream: exception frames are stream errors owned as their type says", "[bedrock]") {
  struct Row {
    const char* type;
    Owner owner;
  };
  const Row rows[] = {{"throttlingException", Owner::rate},
                      {"serviceUnavailableException", Owner::transient},
                      {"modelStreamErrorException", Owner::transient},
                      {"internalServerException", Owner::transient},
                      {"validationException", Owner::request}};
  for (const auto& row : rows) {
    INFO(row.type);
    for (const bool after_text : {false, true}) {
      std::string body = event("messageStart", {{"role", "assistant"}});
      if (after_text)
        body += event("contentBlockDelta", {{"delta", {{"text", "alpha"}}}, {"contentBlockIndex", 0}});
      body += es::encode(es::exception(row.type, R"({"message":"it broke"})"));
      body += event("messageStop", {{"stopReason", "end_turn"}});  // never read: the reader stopped
      const auto r = read(body);
      CHECK(r.stopped);
      CHECK(r.result.event == TransportEvent::stream_error_event);
      CHECK(r.result.error_type == row.type);
      CHECK_FALSE(r.result.terminated);
      const auto c = classify_result(r.result, static_cast<int>(r.tokens.size()));
      CHECK(c.owner == row.owner);
      CHECK(c.commit == (after_text ? CommitState::committed : CommitState::none));
      CHECK_THAT(std::string(c.reason.view()), Catch::Contains(row.type));
    }
  }
}

TEST_CASE("bedrock classifier: each exception before a stream by status and x-amzn-ErrorType", "[bedrock]") {
  struct Row {
    int status;
    const char* type;
    const char* message;
    Owner owner;
  };
  const Row rows[] = {
      {429, "ThrottlingException", "Too many requests, please wait before trying again.", Owner::rate},
      {400, "ServiceQuotaExceededException", "Your request exceeds the service quota for your account.",
       Owner::quota},
      {503, "ServiceUnavailableException", "Bedrock is unable to process your request.", Owner::transient},
      {500, "InternalServerException", "The server encountered an internal error.", Owner::unknown},
      {500, "InternalServerException", "Input is too long for requested model.", Owner::request},
      {408, "ModelTimeoutException", "The request took too long to process.", Owner::transient},
      {429, "ModelNotReadyException", "The model is not ready to serve inference requests.",
       Owner::transient},
      {400, "ValidationException", "Input is too long for requested model.", Owner::request},
      {400, "ValidationException", "Malformed input request, please reformat your input and try again.",
       Owner::request},
      {403, "AccessDeniedException", "You don't have access to the model with the specified model ID.",
       Owner::auth},
      {404, "ResourceNotFoundException", "The model does not exist.", Owner::request},
      {403, "AccessDeniedException",
       "INVALID_PAYMENT_INSTRUMENT:A valid payment instrument must be provided.", Owner::quota},
      {400, "ValidationException", "Output blocked by content filtering policy.", Owner::policy},
      // AWS may append the type's namespace after a ':'.
      {429, "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/", "Too many requests.",
       Owner::rate},
  };
  for (const auto& row : rows) {
    INFO(row.status << " " << row.type);
    const auto c = classify_error(row.status, row.type, row.message);
    CHECK(c.owner == row.owner);
    CHECK(c.commit == CommitState::none);
    CHECK_THAT(std::string(c.reason.view()), Catch::StartsWith(std::to_string(row.status) + " "));
  }
  CHECK_THAT(std::string(classify_error(429, "ThrottlingException", "slow down").reason.view()),
             Catch::Contains("ThrottlingException"));
}

TEST_CASE("bedrock classifier: x-amz-retry-after is a hint in milliseconds", "[bedrock]") {
  auto c = classify_error(429, "ThrottlingException", "slow down", {{"x-amz-retry-after", "1500"}});
  CHECK(c.owner == Owner::rate);
  REQUIRE(c.retry_after_ms);
  CHECK(*c.retry_after_ms == Approx(1500));
  // It wins over a Retry-After in seconds; without it the usual headers are read.
  c = classify_error(429, "ThrottlingException", "slow down",
                     {{"retry-after", "9"}, {"x-amz-retry-after", "250"}});
  CHECK(*c.retry_after_ms == Approx(250));
  c = classify_error(429, "ThrottlingException", "slow down", {{"retry-after", "2"}});
  CHECK(*c.retry_after_ms == Approx(2000));
  CHECK_FALSE(classify_error(429, "ThrottlingException", "slow down").retry_after_ms);
}

TEST_CASE("bedrock classifier: failing stop reasons of a complete answer", "[bedrock]") {
  Observation obs;
  obs.dialect = Dialect::bedrock;
  obs.status = 200;
  obs.finish_reason = "end_turn";
  CHECK(classify(obs).owner == Owner::none);
  obs.finish_reason = "malformed_model_output";
  CHECK(classify(obs).owner == Owner::transient);
  obs.finish_reason = "malformed_tool_use";
  CHECK(classify(obs).owner == Owner::transient);
  obs.finish_reason = "guardrail_intervened";
  CHECK(classify(obs).owner == Owner::policy);
  obs.finish_reason = "content_filtered";
  CHECK(classify(obs).owner == Owner::policy);
  // Another dialect's codec has no such stop reasons: its own rules only.
  obs.dialect = Dialect::anthropic;
  CHECK(classify(obs).owner == Owner::none);
}

TEST_CASE("bedrock stream: a tool call's start and its input in deltas", "[bedrock]") {
  const std::string body =
      event("messageStart", {{"role", "assistant"}}) +
      event("contentBlockStart", {{"start", {{"toolUse", {{"toolUseId", "tu-1"}, {"name", "record_label"}}}}},
                                  {"contentBlockIndex", 0}}) +
      event("contentBlockDelta",
            {{"delta", {{"toolUse", {{"input", R"({"label")"}}}}}, {"contentBlockIndex", 0}}) +
      event("contentBlockDelta",
            {{"delta", {{"toolUse", {{"input", R"(:"x"})"}}}}}, {"contentBlockIndex", 0}}) +
      event("contentBlockStop", {{"contentBlockIndex", 0}}) +
      event("messageStop", {{"stopReason", "tool_use"}});
  const auto r = read(body);
  CHECK(r.result.event == TransportEvent::none);
  CHECK(r.tokens.empty());
  CHECK(r.result.tool_call);
  CHECK(r.result.tool_call_id == "tu-1");
  CHECK(r.result.tool_name == "record_label");
  CHECK(json::parse(r.result.tool_arguments).at("label") == "x");
  CHECK(r.result.finish_reason == "tool_use");
}

TEST_CASE("bedrock stream: an error frame is a stream error, an unknown message type malformed",
          "[bedrock]") {
  es::Message error;
  error.headers = {{":message-type", es::HeaderType::string, std::string("error")},
                   {":error-code", es::HeaderType::string, std::string("InternalFailure")},
                   {":error-message", es::HeaderType::string, std::string("it broke")}};
  auto r = read(event("messageStart", {{"role", "assistant"}}) + es::encode(error));
  CHECK(r.result.event == TransportEvent::stream_error_event);
  CHECK(r.result.error_type == "InternalFailure");
  CHECK(classify_result(r.result, 0).owner == Owner::transient);  // a type the codec does not list

  es::Message odd = es::event("messageStart", "{}");
  odd.headers[0].value = std::string("surprise");  // :message-type
  r = read(es::encode(odd));
  CHECK(r.result.event == TransportEvent::malformed_event);
  // A payload that is not JSON is malformed too.
  r = read(es::encode(es::event("contentBlockDelta", "{not json")));
  CHECK(r.result.event == TransportEvent::malformed_event);
}
