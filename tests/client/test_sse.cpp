// The incremental SSE parser and the dialect codecs that give its events meaning.
#include <boost/json.hpp>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "llmchaos/client/dialect_codec.hpp"
#include "llmchaos/client/sse.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

namespace {

// Sample streams as the providers frame them (provider-wire.md 1.3, 2.3, 3.3).
const std::string openai_stream =
    "data: "
    "{\"id\":\"c\",\"model\":\"gpt-x\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
    "\"content\":\"\"},"
    "\"finish_reason\":null}],\"usage\":null}\n\n"
    "data: "
    "{\"id\":\"c\",\"model\":\"gpt-x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hel\"},\"finish_"
    "reason\":null}],"
    "\"usage\":null}\n\n"
    "data: "
    "{\"id\":\"c\",\"model\":\"gpt-x\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"lo\"},\"finish_"
    "reason\":null}],"
    "\"usage\":null}\n\n"
    "data: "
    "{\"id\":\"c\",\"model\":\"gpt-x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],"
    "\"usage\":null}\n\n"
    "data: "
    "{\"id\":\"c\",\"model\":\"gpt-x\",\"choices\":[],\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":2}"
    "}\n\n"
    "data: [DONE]\n\n";

const std::string anthropic_stream =
    "event: message_start\n"
    "data: "
    "{\"type\":\"message_start\",\"message\":{\"id\":\"m\",\"type\":\"message\",\"role\":\"assistant\","
    "\"model\":"
    "\"claude-x\",\"content\":[],\"usage\":{\"input_tokens\":3,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\n"
    "data: "
    "{\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: ping\ndata: {\"type\":\"ping\"}\n\n"
    ": a comment line\n"
    "event: content_block_delta\n"
    "data: "
    "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hel\"}}\n\n"
    "event: content_block_delta\n"
    "data: "
    "{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"lo\"}}\n\n"
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: message_delta\n"
    "data: "
    "{\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":2}}"
    "\n\n"
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

const std::string gemini_stream =
    "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"hel\"}]},\"index\":0}],"
    "\"modelVersion\":\"gemini-x\"}\r\n\r\n"
    "data: "
    "{\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"lo\"}]},\"finishReason\":"
    "\"STOP\","
    "\"index\":0}],\"usageMetadata\":{\"promptTokenCount\":3,\"candidatesTokenCount\":2},\"modelVersion\":"
    "\"gemini-x\"}"
    "\r\n\r\n";

struct Played {
  Answer answer;
  std::vector<std::string> tokens;
  std::vector<EventKind> kinds;
  bool end = false;
};

Played play(Dialect d, const std::vector<SseEvent>& events) {
  Played p;
  for (const auto& ev : events) {
    auto r = codec_for(d).on_event(ev, p.answer);
    p.kinds.push_back(r.kind);
    if (r.kind == EventKind::content) p.tokens.push_back(r.token);
    p.end = p.end || r.end;
  }
  return p;
}

}  // namespace

TEST_CASE("sse parser splits events on LF LF, CR LF CR LF and CR CR, and joins multi-line data", "[sse]") {
  SseParser p;
  auto events = p.feed("event: a\ndata: one\ndata: two\n\ndata: x\r\n\r\nid: 7\ndata:no-space\r\r");
  REQUIRE(events.size() == 3);
  CHECK(events[0] == SseEvent{"a", "one\ntwo", ""});
  CHECK(events[1] == SseEvent{"", "x", ""});
  CHECK(events[2] == SseEvent{"", "no-space", "7"});
  CHECK_FALSE(p.pending());
}

TEST_CASE("sse parser ignores comments, unknown fields and blocks without data", "[sse]") {
  SseParser p;
  auto events = p.feed(": keep-alive\n\nevent: lonely\n\nfoo: bar\ndata\n\nretry: 10\ndata: y\n\n");
  REQUIRE(events.size() == 2);
  CHECK(events[0].data.empty());  // "data" with no colon is a data field with an empty value
  CHECK(events[0].event.empty());
  CHECK(events[1].data == "y");
}

TEST_CASE("sse parser keeps an unterminated last event pending instead of dispatching it", "[sse]") {
  SseParser p;
  auto events = p.feed("data: complete\n\ndata: {\"half\":");
  REQUIRE(events.size() == 1);
  CHECK(p.pending());
  CHECK(p.events_dispatched() == 1);
}

TEST_CASE("sse parser strips a leading byte order mark", "[sse]") {
  SseParser p;
  auto events = p.feed(
      "\xEF\xBB\xBF"
      "data: a\n\n");
  REQUIRE(events.size() == 1);
  CHECK(events[0].data == "a");
}

TEST_CASE("every split point of each dialect's sample stream gives the same events", "[sse]") {
  for (const auto* stream : {&openai_stream, &anthropic_stream, &gemini_stream}) {
    SseParser whole;
    const auto expected = whole.feed(*stream);
    REQUIRE(expected.size() >= 2);
    for (std::size_t cut = 0; cut <= stream->size(); ++cut) {
      SseParser p;
      auto got = p.feed(std::string_view(*stream).substr(0, cut));
      p.feed(std::string_view(*stream).substr(cut), got);
      REQUIRE(got == expected);
      REQUIRE_FALSE(p.pending());
    }
    SseParser bytewise;  // one byte per chunk: the \r / \n pair straddles every chunk boundary
    std::vector<SseEvent> got;
    for (char c : *stream) bytewise.feed(std::string_view(&c, 1), got);
    CHECK(got == expected);
  }
}

TEST_CASE("sse parser bounds an event larger than its limit", "[sse]") {
  SseParser p(16);
  auto events = p.feed("data: " + std::string(100, 'x') + "\n\n");
  REQUIRE(events.size() == 1);
  CHECK(events[0].data.size() <= 16);
  CHECK(p.overflowed());
}

TEST_CASE("openai stream: content deltas are tokens, [DONE] ends, usage and model are read", "[codec]") {
  auto p = play(Dialect::openai, SseParser().feed(openai_stream));
  CHECK(p.tokens == std::vector<std::string>{"hel", "lo"});
  CHECK(p.end);
  CHECK(p.answer.text == "hello");
  CHECK(p.answer.finish_reason == "stop");
  CHECK(p.answer.model == "gpt-x");
  CHECK(p.answer.input_tokens == 3);
  CHECK(p.answer.output_tokens == 2);
}

TEST_CASE("anthropic stream: text deltas are tokens, ping is ignored, message_stop ends", "[codec]") {
  auto p = play(Dialect::anthropic, SseParser().feed(anthropic_stream));
  CHECK(p.tokens == std::vector<std::string>{"hel", "lo"});
  CHECK(p.end);
  CHECK(p.answer.finish_reason == "end_turn");
  CHECK(p.answer.model == "claude-x");
  CHECK(p.answer.input_tokens == 3);
  CHECK(p.answer.output_tokens == 2);
}

TEST_CASE("gemini stream: the frame with finishReason is the end (no sentinel)", "[codec]") {
  auto events = SseParser().feed(gemini_stream);
  auto first = play(Dialect::gemini, {events[0]});
  CHECK_FALSE(first.end);
  auto p = play(Dialect::gemini, events);
  CHECK(p.tokens == std::vector<std::string>{"hel", "lo"});
  CHECK(p.end);
  CHECK(p.answer.finish_reason == "STOP");
  CHECK(p.answer.model == "gemini-x");
  CHECK(p.answer.output_tokens == 2);
}

TEST_CASE("in-stream error events are recognised in each dialect", "[codec]") {
  Answer a;
  CHECK(codec_for(Dialect::openai)
            .on_event(
                {"", R"({"error":{"message":"boom","type":"server_error","param":null,"code":null}})", ""}, a)
            .kind == EventKind::error);
  CHECK(codec_for(Dialect::anthropic)
            .on_event({"error",
                       R"({"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}})", ""},
                      a)
            .kind == EventKind::error);
  CHECK(codec_for(Dialect::gemini)
            .on_event({"", R"({"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}})", ""}, a)
            .kind == EventKind::error);
  // Gemini's SDK rule: an error without a numeric 4xx/5xx code is not an error frame.
  CHECK(codec_for(Dialect::gemini).on_event({"", R"({"error":{"code":"x"}})", ""}, a).kind !=
        EventKind::error);
}

TEST_CASE("non-JSON event data is malformed in each dialect, and anthropic drops unnamed frames", "[codec]") {
  for (auto d : {Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses}) {
    Answer a;
    CHECK(codec_for(d)
              .on_event({d == Dialect::anthropic ? "content_block_delta" : "", "{not json", ""}, a)
              .kind == EventKind::malformed);
  }
  Answer a;
  CHECK(codec_for(Dialect::anthropic).on_event({"", "{not json", ""}, a).kind == EventKind::ignored);
}

TEST_CASE("non-stream answers of each dialect parse to text, model, finish and usage", "[codec]") {
  Answer o, an, g;
  REQUIRE(codec_for(Dialect::openai)
              .parse_answer(R"({"id":"c","object":"chat.completion","model":"gpt-x","choices":[{"index":0,)"
                            R"("message":{"role":"assistant","content":"hi"},"finish_reason":"stop"}],)"
                            R"("usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}})",
                            o));
  CHECK(o.text == "hi");
  CHECK(o.model == "gpt-x");
  CHECK(o.output_tokens == 1);
  REQUIRE(codec_for(Dialect::anthropic)
              .parse_answer(R"({"id":"m","type":"message","role":"assistant","model":"claude-x",)"
                            R"("content":[{"type":"text","text":"hi"}],"stop_reason":"end_turn",)"
                            R"("usage":{"input_tokens":1,"output_tokens":1}})",
                            an));
  CHECK(an.text == "hi");
  CHECK(an.finish_reason == "end_turn");
  REQUIRE(
      codec_for(Dialect::gemini)
          .parse_answer(
              R"({"candidates":[{"content":{"role":"model","parts":[{"text":"thinking","thought":true},)"
              R"({"text":"hi"}]},"finishReason":"STOP","index":0}],)"
              R"("usageMetadata":{"promptTokenCount":1,"candidatesTokenCount":1},"modelVersion":"gemini-x"})",
              g));
  CHECK(g.text == "hi");  // thoughts are not the answer
  CHECK(g.model == "gemini-x");
  Answer bad;
  CHECK_FALSE(codec_for(Dialect::openai).parse_answer("not json", bad));
}

TEST_CASE("tool calls are read from each dialect's answer", "[codec]") {
  Answer o, an, g;
  REQUIRE(
      codec_for(Dialect::openai)
          .parse_answer(R"({"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":null,)"
                        R"("tool_calls":[{"id":"call_1","type":"function","function":{"name":"record_label",)"
                        R"("arguments":"{\"label\":\"a\"}"}}]},"finish_reason":"tool_calls"}]})",
                        o));
  CHECK(o.tool_call);
  CHECK(o.tool_name == "record_label");
  CHECK(o.tool_call_id == "call_1");
  CHECK(o.tool_arguments == R"({"label":"a"})");
  REQUIRE(codec_for(Dialect::anthropic)
              .parse_answer(R"({"model":"m","content":[{"type":"tool_use","id":"tu_1","name":"record_label",)"
                            R"("input":{"label":"a"}}],"stop_reason":"tool_use"})",
                            an));
  CHECK(an.tool_call);
  CHECK(an.tool_call_id == "tu_1");
  REQUIRE(codec_for(Dialect::gemini)
              .parse_answer(R"({"candidates":[{"content":{"role":"model","parts":[{"functionCall":)"
                            R"({"name":"record_label","args":{"label":"a"}}}]},"finishReason":"STOP"}]})",
                            g));
  CHECK(g.tool_call);
  CHECK(g.tool_name == "record_label");
}

TEST_CASE("requests are shaped as the official SDKs send them", "[codec]") {
  AttemptRequest req;
  req.model = "m1";
  req.prompt = "p";
  req.stream = true;
  req.tool_call = true;

  CHECK(codec_for(Dialect::openai).target(req) == "/v1/chat/completions");
  auto o = boost::json::parse(codec_for(Dialect::openai).request_body(req));
  CHECK(o.at("stream").as_bool());
  CHECK(o.at("stream_options").at("include_usage").as_bool());
  CHECK(o.at("tools").at(0).at("function").at("name").as_string() == "record_label");

  CHECK(codec_for(Dialect::anthropic).target(req) == "/v1/messages");
  auto a = boost::json::parse(codec_for(Dialect::anthropic).request_body(req));
  CHECK(a.at("max_tokens").as_int64() > 0);
  CHECK(a.at("messages").at(0).at("content").as_string() == "p");

  CHECK(codec_for(Dialect::gemini).target(req) == "/v1beta/models/m1:streamGenerateContent?alt=sse");
  req.stream = false;
  CHECK(codec_for(Dialect::gemini).target(req) == "/v1beta/models/m1:generateContent");
  auto g = boost::json::parse(codec_for(Dialect::gemini).request_body(req));
  CHECK(g.at("contents").at(0).at("parts").at(0).at("text").as_string() == "p");
  CHECK_FALSE(g.as_object().contains("stream"));

  // The follow-up after a tool side effect carries the call and its result.
  req.tool_turn = ToolTurn{"call_1", "record_label", R"({"label":"a"})", "ok"};
  auto f = boost::json::parse(codec_for(Dialect::openai).request_body(req));
  CHECK(f.at("messages").at(2).at("role").as_string() == "tool");
  CHECK(f.at("messages").at(2).at("tool_call_id").as_string() == "call_1");
  auto fa = boost::json::parse(codec_for(Dialect::anthropic).request_body(req));
  CHECK(fa.at("messages").at(2).at("content").at(0).at("type").as_string() == "tool_result");
  auto fg = boost::json::parse(codec_for(Dialect::gemini).request_body(req));
  CHECK(fg.at("contents").at(2).at("parts").at(0).at("functionResponse").at("name").as_string() ==
        "record_label");
}

TEST_CASE("each dialect authenticates with its own header", "[codec]") {
  CHECK(codec_for(Dialect::openai).headers("k").at(0) ==
        std::pair<std::string, std::string>{"authorization", "Bearer k"});
  CHECK(codec_for(Dialect::gemini).headers("k").at(0) ==
        std::pair<std::string, std::string>{"x-goog-api-key", "k"});
  auto a = codec_for(Dialect::anthropic).headers("k");
  CHECK(a.size() == 2);
}

TEST_CASE("codecs survive hostile JSON: wrong types, huge numbers, deep nesting", "[codec]") {
  const std::vector<std::string> inputs = {
      R"({"choices":[{"delta":{"content":5}}],"usage":{"prompt_tokens":1e300,"completion_tokens":-1e300}})",
      R"({"type":"content_block_delta","delta":{"type":"text_delta","text":["x"]}})",
      R"({"candidates":{"0":1},"usageMetadata":{"promptTokenCount":"many"}})",
      R"({"choices":"nope","content":7,"candidates":[null]})",
      std::string(10000, '[') + std::string(10000, ']'),
      "null",
      "",
  };
  for (auto d : {Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses}) {
    for (const auto& in : inputs) {
      Answer a;
      auto r = codec_for(d).on_event({"content_block_delta", in, ""}, a);
      CHECK(r.token.empty());
      CHECK(a.input_tokens == 0);
      Answer b;
      codec_for(d).parse_answer(in, b);
      CHECK(b.text.empty());
      CHECK(b.output_tokens == 0);
    }
  }
}
