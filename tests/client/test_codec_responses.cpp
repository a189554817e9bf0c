// The Responses API codec: the request as the openai SDK sends it (client.responses.create), and the
// mock's own rendering of the dialect (plain, typed stream, tool call, failed, incomplete) read back.
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
  return codec_for(Dialect::responses);
}
const mock::DialectSpec& mock_dialect() {
  return mock::dialect_spec(Dialect::responses);
}

mock::Answer mock_answer(std::string_view text, std::string tool = {}) {
  mock::Answer a;
  a.id = "resp_7";
  a.model = "gpt-x";
  a.tokens = mock::split_tokens(text);
  a.input_tokens = 3;
  if (!tool.empty()) {
    a.tool_name = std::move(tool);
    a.tool_call_id = "call_7";
    a.finish = mock::Finish::tool_call;
  }
  return a;
}

struct Played {
  Answer answer;
  std::vector<std::string> tokens;
  std::vector<EventKind> kinds;
  bool end = false;
};

Played play(const std::vector<mock::SseFrame>& frames) {
  std::string wire;
  for (const auto& f : frames) wire += f.bytes;
  Played p;
  SseParser parser;
  for (const auto& ev : parser.feed(wire)) {
    const auto r = codec().on_event(ev, p.answer);
    p.kinds.push_back(r.kind);
    if (r.kind == EventKind::content) p.tokens.push_back(r.token);
    p.end = p.end || r.end;
  }
  return p;
}

std::vector<mock::SseFrame> all(const mock::StreamParts& s) {
  std::vector<mock::SseFrame> out;
  for (const auto* part : {&s.head, &s.content, &s.tail, &s.terminator})
    out.insert(out.end(), part->begin(), part->end());
  return out;
}
}  // namespace

TEST_CASE(
    "responses codec: the request is POST /v1/responses with input items, flat function tools and stream",
    "[codec]") {
  AttemptRequest req;
  req.model = "m1";
  req.prompt = "p";
  req.stream = true;
  req.tool_call = true;
  CHECK(codec().target(req) == "/v1/responses");
  CHECK(codec().headers("k").at(0) == std::pair<std::string, std::string>{"authorization", "Bearer k"});
  auto b = json::parse(codec().request_body(req));
  CHECK(b.at("model") == "m1");
  CHECK(b.at("input").at(0).at("role") == "user");
  CHECK(b.at("input").at(0).at("content") == "p");
  CHECK(b.at("stream").as_bool());
  CHECK(b.at("tools").at(0).at("type") == "function");
  CHECK(b.at("tools").at(0).at("name") == "record_label");
  // The follow-up after the side effect: the call and its function_call_output, as the mock reads them.
  req.tool_turn = ToolTurn{"call_1", "record_label", R"({"label":"a"})", "ok"};
  req.stream = false;
  const auto body = codec().request_body(req);
  auto f = json::parse(body);
  CHECK_FALSE(f.as_object().contains("stream"));
  CHECK(f.at("input").at(1).at("type") == "function_call");
  CHECK(f.at("input").at(2).at("type") == "function_call_output");
  CHECK(f.at("input").at(2).at("call_id") == "call_1");
  const auto parsed = mock_dialect().parse("POST", "/v1/responses", body);
  CHECK(parsed.chat.last_is_tool_result);
  CHECK(parsed.chat.tools == std::vector<std::string>{"record_label"});
  req.tool_turn.reset();
  req.tool_call = false;
  req.prefill = true;
  CHECK(mock_dialect().parse("POST", "/v1/responses", codec().request_body(req)).chat.prefill);
}

TEST_CASE("responses codec: the mock's typed stream gives one token per delta, ends at response.completed",
          "[codec]") {
  const auto p = play(all(mock_dialect().render_stream(mock_answer("hello from primary"))));
  CHECK(p.tokens == std::vector<std::string>{"hello ", "from ", "primary"});
  CHECK(p.answer.text == "hello from primary");
  CHECK(p.answer.model == "gpt-x");
  CHECK(p.answer.finish_reason == "stop");
  CHECK(p.answer.output_tokens == 3);
  CHECK(p.end);
  CHECK(p.kinds.back() == EventKind::ignored);
  // Without the terminator (no_terminator) the text is whole but the end was never seen.
  auto parts = mock_dialect().render_stream(mock_answer("hello from primary"));
  parts.terminator.clear();
  const auto open = play(all(parts));
  CHECK(open.answer.text == "hello from primary");
  CHECK_FALSE(open.end);
}

TEST_CASE("responses codec: plain response objects and function_call items parse", "[codec]") {
  Answer a;
  REQUIRE(codec().parse_answer(mock_dialect().render_body(mock_answer("label: positive")), a));
  CHECK(a.text == "label: positive");
  CHECK(a.finish_reason == "stop");
  CHECK(a.model == "gpt-x");
  CHECK(a.input_tokens == 3);
  Answer t;
  REQUIRE(codec().parse_answer(mock_dialect().render_body(mock_answer("x", "record_label")), t));
  CHECK(t.tool_call);
  CHECK(t.tool_name == "record_label");
  CHECK(t.tool_call_id == "call_7");
  CHECK(t.tool_arguments == "{}");
  CHECK(t.finish_reason == "tool_calls");
  const auto s = play(all(mock_dialect().render_stream(mock_answer("x", "record_label"))));
  CHECK(s.answer.tool_call);
  CHECK(s.answer.tool_call_id == "call_7");
  CHECK(s.answer.tool_arguments == "{}");
  CHECK(s.end);
  Answer bad;
  CHECK_FALSE(codec().parse_answer(R"({"choices":[]})", bad));
}

TEST_CASE(
    "responses codec: response.failed and error events are in-stream errors, response.incomplete a policy "
    "finish",
    "[codec]") {
  const auto answer = mock_answer("one two three");
  auto parts = mock_dialect().render_stream(answer);
  std::vector<mock::SseFrame> frames(parts.head.begin(), parts.head.end());
  frames.push_back(parts.content[0]);
  frames.push_back(mock_dialect().stream_error_frame(answer, frames.size()));
  const auto failed = play(frames);
  CHECK(failed.kinds.back() == EventKind::error);
  CHECK(failed.tokens.size() == 1);
  Answer acc;
  CHECK(codec()
            .on_event({"error",
                       R"({"type":"error","code":"server_error","message":"boom","sequence_number":3})", ""},
                      acc)
            .kind == EventKind::error);
  auto filtered = answer;
  filtered.finish = mock::Finish::content_filter;
  filtered.tokens.resize(2);
  const auto stopped = play(all(mock_dialect().render_stream(filtered)));
  CHECK(stopped.end);
  CHECK(stopped.answer.finish_reason == "content_filter");
  CHECK(stopped.answer.text == "one two ");
  CHECK(codec().on_event({"response.output_text.delta", "{not json", ""}, acc).kind == EventKind::malformed);
}

TEST_CASE(
    "responses codec: a background request asks background, a resume is a GET of the stored stream after N",
    "[codec][resume]") {
  AttemptRequest req;
  req.stream = true;
  req.background = true;
  const auto body = json::parse(codec().request_body(req));
  CHECK(body.at("background").as_bool());
  CHECK(codec().target(req) == "/v1/responses");
  CHECK(std::string(attempt_method(req)) == "POST");
  req.resume = ResumePoint{"resp_7", 9};
  CHECK(codec().target(req) == "/v1/responses/resp_7?stream=true&starting_after=9");
  CHECK(codec().request_body(req).empty());
  CHECK(std::string(attempt_method(req)) == "GET");
}

TEST_CASE(
    "responses codec: a stream names its response id and background flag, and the last sequence number read",
    "[codec][resume]") {
  auto a = mock_answer("one two three");
  a.background = true;
  auto frames = all(mock_dialect().render_stream(a));
  frames.resize(6);  // created, in_progress, item added, part added, two deltas: a cut
  const auto p = play(frames);
  CHECK(p.answer.response_id == "resp_7");
  CHECK(p.answer.background);
  CHECK(p.answer.last_sequence == 5);
  CHECK(p.answer.text == "one two ");
}
