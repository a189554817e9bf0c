// The Azure OpenAI codec: the request as the openai SDK's AzureOpenAI client sends it (deployment route,
// api-version, api-key), and the mock's own Azure rendering (filter annotations included) read back.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "llmchaos/client/dialect_codec.hpp"
#include "llmchaos/client/sse.hpp"
#include "llmchaos/mockprovider/dialect.hpp"

using namespace llmchaos;
using namespace llmchaos::client;
namespace json = boost::json;

namespace {
const DialectCodec& codec() {
  return codec_for(Dialect::azure);
}
const mock::DialectSpec& mock_dialect() {
  return mock::dialect_spec(Dialect::azure);
}

mock::Answer mock_answer(std::string_view text) {
  mock::Answer a;
  a.id = "chatcmpl-7";
  a.model = "dep-1";
  a.tokens = mock::split_tokens(text);
  a.input_tokens = 3;
  a.include_usage = true;
  return a;
}

struct Played {
  Answer answer;
  std::string text;
  std::vector<EventKind> kinds;
  bool end = false;
};

Played play(const mock::StreamParts& s) {
  std::string wire;
  for (const auto* part : {&s.head, &s.content, &s.tail, &s.terminator})
    for (const auto& f : *part) wire += f.bytes;
  Played p;
  SseParser parser;
  for (const auto& ev : parser.feed(wire)) {
    const auto r = codec().on_event(ev, p.answer);
    p.kinds.push_back(r.kind);
    if (r.kind == EventKind::content) p.text += r.token;
    p.end = p.end || r.end;
  }
  return p;
}
}  // namespace

TEST_CASE(
    "azure codec: the deployment route with api-version, the model as the deployment, the api-key header",
    "[codec]") {
  AttemptRequest req;
  req.model = "my deployment";
  CHECK(codec().target(req) == "/openai/deployments/my%20deployment/chat/completions?api-version=2024-10-21");
  req.model = "gpt-4o";
  CHECK(codec().target(req) == "/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21");
  const auto h = codec().headers("key-1");
  REQUIRE(h.size() == 1);
  CHECK(h[0].first == "api-key");
  CHECK(h[0].second == "key-1");
  // The mock serves what the codec asks for.
  const auto parsed = mock_dialect().parse("POST", codec().target(req), codec().request_body(req));
  CHECK(parsed.error == mock::RequestError::none);
  CHECK(parsed.chat.model == "gpt-4o");
}

TEST_CASE("azure codec: the body is Chat Completions, streamed with usage", "[codec]") {
  AttemptRequest req;
  req.stream = true;
  req.prompt = "classify this";
  const auto body = json::parse(codec().request_body(req));
  CHECK(body.at("messages").at(0).at("content") == "classify this");
  CHECK(body.at("stream") == true);
  CHECK(body.at("stream_options").at("include_usage") == true);
}

TEST_CASE("azure codec: a plain answer with filter annotations reads as the whole text", "[codec]") {
  Answer out;
  REQUIRE(codec().parse_answer(mock_dialect().render_body(mock_answer("label: positive")), out));
  CHECK(out.text == "label: positive");
  CHECK(out.finish_reason == "stop");
  CHECK(out.model == "dep-1");
  CHECK(out.input_tokens == 3);
  CHECK(out.output_tokens == 2);
}

TEST_CASE("azure codec: the prompt filter chunk is ignored, the content chunks give the text, [DONE] ends it",
          "[codec]") {
  const auto p = play(mock_dialect().render_stream(mock_answer("the label is positive")));
  CHECK(p.text == "the label is positive");
  CHECK(p.end);
  CHECK(p.kinds.front() == EventKind::ignored);  // prompt_filter_results, no choice
  CHECK(p.answer.model == "dep-1");              // the empty model of that chunk did not overwrite it
  CHECK(p.answer.finish_reason == "stop");
  CHECK(p.answer.output_tokens == 4);
}

TEST_CASE(
    "azure codec: a content_filter finish and the in-stream error chunk read as the openai codec reads them",
    "[codec]") {
  auto a = mock_answer("one two three");
  a.finish = mock::Finish::content_filter;
  CHECK(play(mock_dialect().render_stream(a)).answer.finish_reason == "content_filter");
  Answer acc;
  SseParser parser;
  const auto events = parser.feed(mock_dialect().stream_error_frame(a, 3).bytes);
  REQUIRE(events.size() == 1);
  CHECK(codec().on_event(events[0], acc).kind == EventKind::error);
  const auto malformed = parser.feed(mock_dialect().malformed_frame().bytes);
  REQUIRE(malformed.size() == 1);
  CHECK(codec().on_event(malformed[0], acc).kind == EventKind::malformed);
}
