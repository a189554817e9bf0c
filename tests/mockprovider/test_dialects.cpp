// Each dialect's parsing and rendering against the wire facts of provider-wire.md.
#include <boost/json.hpp>
#include <catch2/catch.hpp>

#include "llmchaos/mockprovider/dialect.hpp"
#include "wire_client.hpp"

using namespace llmchaos;
using namespace llmchaos::mock;
namespace json = boost::json;

namespace {
Answer answer(std::string_view text, bool usage = true) {
  Answer a;
  a.id = "id-1";
  a.model = "model-x";
  a.tokens = split_tokens(text);
  a.input_tokens = 3;
  a.include_usage = usage;
  return a;
}

std::string joined_text(Dialect d, const std::vector<SseFrame>& frames) {
  std::string all, text;
  for (const auto& f : frames) all += f.bytes;
  for (const auto& e : test::sse_events(all)) text += test::event_text(d, e);
  return text;
}

std::vector<SseFrame> all_frames(const StreamParts& p) {
  std::vector<SseFrame> out;
  for (const auto* part : {&p.head, &p.content, &p.tail, &p.terminator})
    out.insert(out.end(), part->begin(), part->end());
  return out;
}
}  // namespace

TEST_CASE("a dialect names its id prefix, SDK base path and the paths it serves, and parses each of them",
          "[dialect]") {
  CHECK(dialect_spec(Dialect::openai).id_prefix == "chatcmpl-");
  CHECK(dialect_spec(Dialect::anthropic).id_prefix == "msg_");
  CHECK(dialect_spec(Dialect::gemini).id_prefix == "resp-");
  CHECK(dialect_spec(Dialect::responses).id_prefix == "resp_");
  CHECK(sdk_base_url("http://127.0.0.1:9/ns/primary", Dialect::openai) == "http://127.0.0.1:9/ns/primary/v1");
  CHECK(sdk_base_url("http://127.0.0.1:9/ns/primary", Dialect::anthropic) == "http://127.0.0.1:9/ns/primary");
  CHECK(sdk_base_url("http://127.0.0.1:9/ns/primary", Dialect::gemini) == "http://127.0.0.1:9/ns/primary");
  CHECK(sdk_base_url("http://127.0.0.1:9/ns/primary", Dialect::responses) ==
        "http://127.0.0.1:9/ns/primary/v1");
  CHECK(dialect_spec(Dialect::azure).id_prefix == "chatcmpl-");
  CHECK(sdk_base_url("http://127.0.0.1:9/ns/primary", Dialect::azure) ==
        "http://127.0.0.1:9/ns/primary/openai");
  for (Dialect d : registered_dialects()) {
    const auto& spec = dialect_spec(d);
    CHECK(spec.id == d);
    const auto tool_prefix = d == Dialect::anthropic ? "toolu_"
                             : d == Dialect::bedrock ? "tooluse_"
                                                     : "call_";
    CHECK(spec.tool_call_id_prefix == tool_prefix);
    // A dialect that stores responses answers an unknown id and reads the id an answer names.
    CHECK(spec.stores_responses == (d == Dialect::responses));
    CHECK((spec.unknown_response != nullptr) == spec.stores_responses);
    CHECK((spec.response_id != nullptr) == spec.stores_responses);
    CHECK(spec.retry_hint_in_body == (d == Dialect::gemini));
    REQUIRE_FALSE(spec.paths.empty());
    for (std::string_view line : spec.paths) {
      INFO(line);
      const auto space = line.find(' ');
      REQUIRE(space != std::string_view::npos);
      std::string path(line.substr(space + 1));
      if (const auto at = path.find("{model}"); at != std::string::npos) path.replace(at, 7, "model-x");
      if (const auto at = path.find("{id}"); at != std::string::npos) path.replace(at, 4, "resp_1");
      const auto parsed =
          spec.parse(line.substr(0, space), path, R"({"messages": [{"role": "user", "content": "hi"}]})");
      CHECK(parsed.error != RequestError::not_found);
      CHECK(parsed.error != RequestError::method_not_allowed);
    }
  }
}

TEST_CASE("tokens are one per word and join back to the exact text", "[dialect]") {
  for (std::string text : {"hello from primary", "  two  spaces\tand tab\n", "one", "", "trailing "}) {
    const auto tokens = split_tokens(text);
    std::string joined;
    for (const auto& t : tokens) joined += t;
    CHECK(joined == text);
    CHECK(static_cast<int>(tokens.size()) == count_words(text));
  }
  CHECK(split_tokens("a b") == std::vector<std::string>{"a ", "b"});
}

TEST_CASE("every dialect streams one content frame per word and the frames give back the text", "[dialect]") {
  const auto d =
      GENERATE(Dialect::openai, Dialect::anthropic, Dialect::gemini, Dialect::responses, Dialect::azure);
  const auto& spec = dialect_spec(d);
  const auto parts = spec.render_stream(answer("hello from primary"));
  CHECK(parts.content.size() == 3);
  for (const auto& f : parts.content) CHECK(f.content);
  CHECK(joined_text(d, all_frames(parts)) == "hello from primary");
  CHECK(joined_text(d, parts.content) == "hello from primary");
}

TEST_CASE("openai stream: role first, finish_reason chunk, usage chunk, then [DONE]", "[dialect][openai]") {
  const auto parts = dialect_spec(Dialect::openai).render_stream(answer("a b"));
  REQUIRE(parts.head.size() == 1);
  auto first = json::parse(test::sse_events(parts.head[0].bytes).at(0).data);
  CHECK(first.at("choices").at(0).at("delta").at("role") == "assistant");
  CHECK(first.at("object") == "chat.completion.chunk");
  REQUIRE(parts.tail.size() == 2);
  auto finish = json::parse(test::sse_events(parts.tail[0].bytes).at(0).data);
  CHECK(finish.at("choices").at(0).at("finish_reason") == "stop");
  auto usage = json::parse(test::sse_events(parts.tail[1].bytes).at(0).data);
  CHECK(usage.at("choices").as_array().empty());
  CHECK(usage.at("usage").at("completion_tokens") == 2);
  CHECK(usage.at("usage").at("total_tokens") == 5);
  CHECK(parts.terminator.at(0).bytes == "data: [DONE]\n\n");
  for (const auto& f : all_frames(parts)) {
    CHECK(f.bytes.rfind("data: ", 0) == 0);
    CHECK(f.bytes.size() > 2);
    CHECK(f.bytes.substr(f.bytes.size() - 2) == "\n\n");
  }
  // Without include_usage there is no usage chunk and no usage member.
  const auto plain = dialect_spec(Dialect::openai).render_stream(answer("a b", false));
  CHECK(plain.tail.size() == 1);
  CHECK_FALSE(json::parse(test::sse_events(plain.tail[0].bytes).at(0).data).as_object().contains("usage"));
}

TEST_CASE("anthropic stream: an event line on every frame, message_delta carries usage",
          "[dialect][anthropic]") {
  const auto parts = dialect_spec(Dialect::anthropic).render_stream(answer("a b c"));
  std::vector<std::string> names;
  for (const auto& f : all_frames(parts)) {
    const auto e = test::sse_events(f.bytes).at(0);
    CHECK(f.bytes.rfind("event: ", 0) == 0);
    CHECK(json::parse(e.data).at("type").as_string() == e.event);  // the event name repeats the data's type
    names.push_back(e.event);
  }
  CHECK(names == std::vector<std::string>{"message_start", "content_block_start", "ping",
                                          "content_block_delta", "content_block_delta", "content_block_delta",
                                          "content_block_stop", "message_delta", "message_stop"});
  auto start = json::parse(test::sse_events(parts.head[0].bytes).at(0).data);
  CHECK(start.at("message").at("content").as_array().empty());
  CHECK(start.at("message").at("usage").at("input_tokens") == 3);
  auto delta = json::parse(test::sse_events(parts.tail[1].bytes).at(0).data);
  CHECK(delta.at("usage").at("output_tokens") == 3);
  CHECK(delta.at("delta").at("stop_reason") == "end_turn");
}

TEST_CASE("gemini stream: data frames ending in CRLF CRLF, the last with finishReason and usage",
          "[dialect][gemini]") {
  const auto parts = dialect_spec(Dialect::gemini).render_stream(answer("a b"));
  CHECK(parts.head.empty());
  for (const auto& f : all_frames(parts)) {
    CHECK(f.bytes.rfind("data: ", 0) == 0);
    CHECK(f.bytes.substr(f.bytes.size() - 4) == "\r\n\r\n");
  }
  auto last = json::parse(test::sse_events(parts.terminator.at(0).bytes).at(0).data);
  CHECK(last.at("candidates").at(0).at("finishReason") == "STOP");
  CHECK(last.at("usageMetadata").at("totalTokenCount") == 5);
  CHECK(last.at("modelVersion") == "model-x");
}

TEST_CASE("plain bodies carry the text, the model and the usage of each dialect", "[dialect]") {
  const auto a = answer("hello there");
  auto o = json::parse(dialect_spec(Dialect::openai).render_body(a));
  CHECK(o.at("object") == "chat.completion");
  CHECK(o.at("choices").at(0).at("message").at("content") == "hello there");
  CHECK(o.at("choices").at(0).at("finish_reason") == "stop");
  CHECK(o.at("model") == "model-x");
  CHECK(o.at("usage").at("completion_tokens") == 2);
  auto m = json::parse(dialect_spec(Dialect::anthropic).render_body(a));
  CHECK(m.at("type") == "message");
  CHECK(m.at("content").at(0).at("text") == "hello there");
  CHECK(m.at("stop_reason") == "end_turn");
  CHECK(m.at("usage").at("output_tokens") == 2);
  auto g = json::parse(dialect_spec(Dialect::gemini).render_body(a));
  CHECK(g.at("candidates").at(0).at("content").at("parts").at(0).at("text") == "hello there");
  CHECK(g.at("candidates").at(0).at("finishReason") == "STOP");
  CHECK(g.at("usageMetadata").at("candidatesTokenCount") == 2);
}

namespace {
// The plain Chat Completions body as boost::json serializes the equivalent object: the reference the
// mock's direct rendering must match byte for byte.
std::string openai_body_via_dom(const Answer& a) {
  const bool tool = !a.tool_name.empty();
  json::object message{{"role", "assistant"},
                       {"content", tool ? json::value(nullptr) : json::value(a.text())},
                       {"refusal", nullptr}};
  if (tool)
    message["tool_calls"] =
        json::array{json::object{{"id", a.tool_call_id},
                                 {"type", "function"},
                                 {"function", json::object{{"name", a.tool_name}, {"arguments", "{}"}}}}};
  const auto finish = a.finish == Finish::tool_call        ? "tool_calls"
                      : a.finish == Finish::content_filter ? "content_filter"
                                                           : "stop";
  const json::object o{
      {"id", a.id},
      {"object", "chat.completion"},
      {"created", 1700000000},
      {"model", a.model},
      {"choices", json::array{json::object{
                      {"index", 0}, {"message", message}, {"logprobs", nullptr}, {"finish_reason", finish}}}},
      {"usage", json::object{{"prompt_tokens", a.input_tokens},
                             {"completion_tokens", a.output_tokens()},
                             {"total_tokens", a.input_tokens + a.output_tokens()}}}};
  return json::serialize(o);
}
}  // namespace

TEST_CASE("the openai plain body is byte for byte the serialized object for every byte in every string",
          "[dialect][openai]") {
  const auto& openai = dialect_spec(Dialect::openai);
  // Every byte value at the start, middle and end of strings of the lengths that take each of the
  // plain-text check's paths (short, one word, two words, SIMD blocks and their tails).
  for (std::size_t len : {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 24, 31, 33}) {
    for (std::size_t at : {std::size_t{0}, len / 2, len - 1}) {
      for (int byte = 0; byte < 256; ++byte) {
        std::string s(len, 'a');
        s[at] = static_cast<char>(byte);
        Answer a = answer("hello there");
        a.id = s;
        a.model = s;
        a.tokens = {"x ", s, " y"};
        INFO("length " << len << " at " << at << " byte " << byte);
        REQUIRE(openai.render_body(a) == openai_body_via_dom(a));
        a.tool_name = s;
        a.tool_call_id = s;
        a.finish = Finish::tool_call;
        REQUIRE(openai.render_body(a) == openai_body_via_dom(a));
      }
    }
  }
  Answer a = answer("a longer answer, with \"quotes\", a back\\slash,\na newline and caf\xc3\xa9 in it");
  a.finish = Finish::content_filter;
  a.input_tokens = 123456789;
  CHECK(openai.render_body(a) == openai_body_via_dom(a));
  a.tokens.clear();
  CHECK(openai.render_body(a) == openai_body_via_dom(a));
}

TEST_CASE("a tool-call answer renders as each dialect's tool call", "[dialect]") {
  auto a = answer("ignored");
  a.tool_name = "create_ticket";
  a.tool_call_id = "call_1";
  a.finish = Finish::tool_call;
  auto o = json::parse(dialect_spec(Dialect::openai).render_body(a));
  CHECK(o.at("choices").at(0).at("finish_reason") == "tool_calls");
  CHECK(o.at("choices").at(0).at("message").at("tool_calls").at(0).at("function").at("name") ==
        "create_ticket");
  CHECK(o.at("choices").at(0).at("message").at("content").is_null());
  auto m = json::parse(dialect_spec(Dialect::anthropic).render_body(a));
  CHECK(m.at("stop_reason") == "tool_use");
  CHECK(m.at("content").at(0).at("type") == "tool_use");
  CHECK(m.at("content").at(0).at("name") == "create_ticket");
  auto g = json::parse(dialect_spec(Dialect::gemini).render_body(a));
  CHECK(g.at("candidates").at(0).at("content").at("parts").at(0).at("functionCall").at("name") ==
        "create_ticket");
  for (auto d : {Dialect::openai, Dialect::anthropic, Dialect::gemini})
    CHECK(dialect_spec(d).render_stream(a).content.size() == 1);
}

TEST_CASE("error bodies follow each provider's shape", "[dialect]") {
  auto o = dialect_spec(Dialect::openai).error(ErrorKind::quota, {});
  CHECK(o.status == 429);
  auto oj = json::parse(o.body);
  CHECK(oj.at("error").at("type") == "insufficient_quota");
  CHECK(oj.at("error").at("code") == "insufficient_quota");
  CHECK(oj.at("error").at("param").is_null());
  CHECK(json::parse(dialect_spec(Dialect::openai).error(ErrorKind::rate_limit, {}).body)
            .at("error")
            .at("code") == "rate_limit_exceeded");
  CHECK(json::parse(dialect_spec(Dialect::openai).error(ErrorKind::server, {}).body)
            .at("error")
            .at("code")
            .is_null());

  auto a = dialect_spec(Dialect::anthropic).error(ErrorKind::overloaded, {{}, "req_9", {}, {}});
  CHECK(a.status == 529);
  auto aj = json::parse(a.body);
  CHECK(aj.at("type") == "error");
  CHECK(aj.at("error").at("type") == "overloaded_error");
  CHECK(aj.at("request_id") == "req_9");

  auto g = dialect_spec(Dialect::gemini).error(ErrorKind::rate_limit, {{}, {}, 2500.0, {}});
  CHECK(g.status == 429);
  auto gj = json::parse(g.body);
  CHECK(gj.at("error").at("code") == 429);
  CHECK(gj.at("error").at("status") == "RESOURCE_EXHAUSTED");
  CHECK(gj.at("error").at("details").at(0).at("retryDelay") == "2.5s");
  CHECK(dialect_spec(Dialect::gemini).error(ErrorKind::overloaded, {}).status == 503);
  CHECK(json::parse(dialect_spec(Dialect::gemini).error(ErrorKind::overloaded, {}).body)
            .at("error")
            .at("status") == "UNAVAILABLE");
}

TEST_CASE("in-stream error frames are what each SDK raises on", "[dialect]") {
  auto o = test::sse_events(dialect_spec(Dialect::openai).stream_error_frame(answer("x"), 0).bytes).at(0);
  CHECK(json::parse(o.data).at("error").at("type") == "server_error");
  auto a = test::sse_events(dialect_spec(Dialect::anthropic).stream_error_frame(answer("x"), 0).bytes).at(0);
  CHECK(a.event == "error");
  CHECK(json::parse(a.data).at("error").at("type") == "overloaded_error");
  const auto g_raw = dialect_spec(Dialect::gemini).stream_error_frame(answer("x"), 0).bytes;
  CHECK(g_raw.substr(g_raw.size() - 4) == "\r\n\r\n");
  CHECK(json::parse(test::sse_events(g_raw).at(0).data).at("error").at("code") == 503);
  for (auto d : registered_dialects()) {
    if (dialect_spec(d).framing != StreamFraming::sse) continue;  // Bedrock's bad CRC: test_bedrock.cpp
    boost::system::error_code ec;
    json::parse(test::sse_events(dialect_spec(d).malformed_frame().bytes).at(0).data, ec);
    CHECK(ec);  // not valid JSON
  }
}

TEST_CASE("requests: stream flag, model, tools, prefill and tool results are read per dialect", "[dialect]") {
  auto o = dialect_spec(Dialect::openai)
               .parse("POST", "/v1/chat/completions",
                      R"({"model":"gpt-x","stream":true,"stream_options":{"include_usage":true},
                          "tools":[{"type":"function","function":{"name":"t1"}}],
                          "messages":[{"role":"user","content":"a b c"},{"role":"assistant","content":"x"}]})");
  CHECK(o.error == RequestError::none);
  CHECK(o.chat.stream);
  CHECK(o.chat.include_usage);
  CHECK(o.chat.model == "gpt-x");
  CHECK(o.chat.tools == std::vector<std::string>{"t1"});
  CHECK(o.chat.prefill);
  CHECK(o.chat.input_tokens >= 4);
  auto tr = dialect_spec(Dialect::openai)
                .parse("POST", "/v1/chat/completions", R"({"messages":[{"role":"tool","content":"done"}]})");
  CHECK(tr.chat.last_is_tool_result);

  auto a =
      dialect_spec(Dialect::anthropic)
          .parse(
              "POST", "/v1/messages",
              R"({"model":"c","messages":[{"role":"user","content":[{"type":"tool_result","tool_use_id":"x"}]}],"tools":[{"name":"t"}]})");
  CHECK(a.chat.last_is_tool_result);
  CHECK_FALSE(a.chat.stream);
  CHECK(a.chat.tools == std::vector<std::string>{"t"});

  auto g = dialect_spec(Dialect::gemini)
               .parse("POST", "/v1beta/models/gemini-2:streamGenerateContent?alt=sse",
                      R"({"contents":[{"role":"model","parts":[{"text":"pre"}]}]})");
  CHECK(g.chat.stream);
  CHECK(g.chat.model == "gemini-2");
  CHECK(g.chat.prefill);
  CHECK_FALSE(
      dialect_spec(Dialect::gemini).parse("POST", "/v1beta/models/g:generateContent", "{}").chat.stream);
}

TEST_CASE("requests: wrong paths, methods and bodies are request errors", "[dialect]") {
  for (auto d : {Dialect::openai, Dialect::anthropic, Dialect::gemini}) {
    CHECK(dialect_spec(d).parse("POST", "/v2/whatever", "{}").error == RequestError::not_found);
  }
  CHECK(dialect_spec(Dialect::openai).parse("POST", "/v1/chat/completions", "{not json").error ==
        RequestError::malformed_json);
  CHECK(dialect_spec(Dialect::anthropic).parse("POST", "/v1/messages", "[1]").error ==
        RequestError::malformed_json);
  CHECK(dialect_spec(Dialect::anthropic).parse("GET", "/v1/messages", "").error ==
        RequestError::method_not_allowed);
  auto models = dialect_spec(Dialect::openai).parse("GET", "/v1/models", "");
  CHECK(models.models_list);
  CHECK(json::parse(dialect_spec(Dialect::openai).models_body("m")).at("data").at(0).at("id") == "m");
}
