// `llmchaos proxy`'s pure parts: a plan read as an edit of the healthy stream, that edit applied to
// real frames, the SSE splitter, each dialect's frame roles, and credential redaction.
#include <catch2/catch.hpp>

#include "llmchaos/core/base64.hpp"
#include "llmchaos/core/eventstream.hpp"
#include "llmchaos/mockprovider/fault.hpp"
#include "llmchaos/proxy/proxy.hpp"
#include "llmchaos/proxy/stream_edit.hpp"

using namespace llmchaos;
using namespace llmchaos::mock;
using namespace llmchaos::proxy;

namespace {
const Dialect all_dialects[] = {Dialect::openai,    Dialect::anthropic, Dialect::gemini,
                                Dialect::responses, Dialect::azure,     Dialect::bedrock};

// The plan `serve` builds for a streamed attempt of `fault` (synthetic text of 8 words).
Plan stream_plan(Dialect d, FaultKind fault, std::optional<int> cut_after = std::nullopt,
                 bool forwarded = false) {
  RouteScript route;
  route.dialect = d;
  route.default_text = "s1 s2 s3 s4 s5 s6 s7 s8";
  Step step;
  step.fault = fault;
  step.cut_after_events = cut_after;
  ChatRequest request;
  request.stream = true;
  request.include_usage = true;
  Rng rng{1};
  const Answer answer = healthy_answer(route, step, request, 7);
  return fault_spec(fault).plan({step, request, dialect_spec(d), answer, "req_7", 1, rng, 0, forwarded});
}

// A "real" stream: the dialect's healthy frames of another answer (6 words, other ids).
std::vector<std::string> real_frames(Dialect d) {
  Answer a;
  a.id = "real-1";
  a.model = "real-model";
  a.tokens = {"one ", "two ", "three ", "four ", "five ", "six"};
  a.include_usage = true;
  const auto parts = dialect_spec(d).render_stream(a);
  std::vector<std::string> out;
  for (const auto* part : {&parts.head, &parts.content, &parts.tail, &parts.terminator})
    for (const auto& f : *part) out.push_back(f.bytes);
  return out;
}

struct Edited {
  std::vector<SseFrame> frames;
  bool stopped = false;
  int content() const {
    int n = 0;
    for (const auto& f : frames) n += f.content ? 1 : 0;
    return n;
  }
};

Edited run_edit(Dialect d, const Plan& plan) {
  StreamEditor editor(d, stream_edit(d, plan));
  Edited out;
  for (const auto& f : real_frames(d)) {
    auto o = editor.on_frame(f);
    out.frames.insert(out.frames.end(), o.frames.begin(), o.frames.end());
    if (o.stop) {
      out.stopped = true;
      return out;
    }
  }
  auto o = editor.on_end();
  out.frames.insert(out.frames.end(), o.frames.begin(), o.frames.end());
  return out;
}

bool has_role(Dialect d, const Edited& e, FrameRole role) {
  for (const auto& f : e.frames)
    if (frame_role(d, f.bytes) == role) return true;
  return false;
}
}  // namespace

TEST_CASE("each dialect's healthy frames read as structure, content, closing and terminator", "[proxy]") {
  for (const Dialect d :
       registered_dialects()) {  // every dialect reads its own frames (DialectSpec::frame_role)
    CAPTURE(to_string(d));
    REQUIRE(dialect_spec(d).frame_role != nullptr);
    Answer a;
    a.id = "x";
    a.model = "m";
    a.tokens = {"hello ", "world"};
    a.include_usage = true;
    const auto parts = dialect_spec(d).render_stream(a);
    for (const auto& f : parts.head) CHECK(frame_role(d, f.bytes) == FrameRole::structure);
    for (const auto& f : parts.content) CHECK(frame_role(d, f.bytes) == FrameRole::content);
    for (const auto& f : parts.tail) CHECK(frame_role(d, f.bytes) != FrameRole::content);
    for (const auto& f : parts.terminator) CHECK(frame_role(d, f.bytes) == FrameRole::terminator);
    CHECK(frame_role(d, dialect_spec(d).stream_error_frame(a, 0).bytes) == FrameRole::injected);
    CHECK(frame_role(d, dialect_spec(d).malformed_frame().bytes) == FrameRole::injected);
  }
  CHECK(frame_role(Dialect::openai,
                   "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n") ==
        FrameRole::closing);
  CHECK(frame_role(Dialect::anthropic, "event: ping\ndata: {\"type\":\"ping\"}\n\n") == FrameRole::structure);
  CHECK(frame_role(Dialect::openai, ": keep-alive\n\n") == FrameRole::structure);
}

TEST_CASE("a stream_cut plan lets exactly N real content frames through, then stops", "[proxy]") {
  for (const Dialect d : all_dialects) {
    CAPTURE(to_string(d));
    const auto edit = stream_edit(d, stream_plan(d, FaultKind::stream_cut, 3));
    REQUIRE(edit.content_limit == 3);
    CHECK(edit.injections.empty());
    const auto out = run_edit(d, stream_plan(d, FaultKind::stream_cut, 3));
    CHECK(out.stopped);
    CHECK(out.content() == 3);
    CHECK_FALSE(has_role(d, out, FrameRole::terminator));
  }
}

TEST_CASE("a stream_error plan injects the dialect's error frame after N real content frames", "[proxy]") {
  for (const Dialect d : all_dialects) {
    CAPTURE(to_string(d));
    const auto plan = stream_plan(d, FaultKind::stream_error, 2);
    const auto out = run_edit(d, plan);
    CHECK(out.stopped);
    CHECK(out.content() == 2);
    REQUIRE_FALSE(out.frames.empty());
    CHECK(out.frames.back().bytes ==
          plan.frames.back().bytes);  // the plan's own error frame, as serve sends it
    CHECK(frame_role(d, out.frames.back().bytes) == FrameRole::injected);
  }
}

TEST_CASE("a malformed_event plan replaces real content frame N+1 and keeps the rest of the stream",
          "[proxy]") {
  for (const Dialect d : all_dialects) {
    CAPTURE(to_string(d));
    const auto edit = stream_edit(d, stream_plan(d, FaultKind::malformed_event, 1));
    CHECK_FALSE(edit.content_limit);
    REQUIRE(edit.injections.size() == 1);
    CHECK(edit.injections[0].replaces);
    const auto out = run_edit(d, stream_plan(d, FaultKind::malformed_event, 1));
    CHECK_FALSE(out.stopped);
    CHECK(out.content() == 5);  // six real content frames, one replaced
    REQUIRE(out.frames.size() >= 2);
    CHECK(has_role(d, out, FrameRole::terminator));
    int injected_at = -1, content_seen = 0;
    for (const auto& f : out.frames) {
      if (f.bytes == dialect_spec(d).malformed_frame().bytes) injected_at = content_seen;
      content_seen += f.content ? 1 : 0;
    }
    CHECK(injected_at == 1);
  }
}

TEST_CASE("no_terminator drops only the real terminator, ok and slow_first_token pass everything",
          "[proxy]") {
  for (const Dialect d : all_dialects) {
    CAPTURE(to_string(d));
    const auto dropped = run_edit(d, stream_plan(d, FaultKind::no_terminator));
    CHECK(dropped.content() == 6);
    CHECK_FALSE(has_role(d, dropped, FrameRole::terminator));
    for (const auto fault : {FaultKind::ok, FaultKind::slow_first_token, FaultKind::stream_stall}) {
      if (fault == FaultKind::stream_stall) continue;
      const auto all = run_edit(d, stream_plan(d, fault));
      CHECK(all.frames.size() == real_frames(d).size());
      CHECK(all.content() == 6);
    }
  }
}

TEST_CASE(
    "a forwarded plan that keeps the healthy stream renders nothing and passes what the rendered one passes",
    "[proxy]") {
  for (const Dialect d : registered_dialects()) {
    CAPTURE(to_string(d));
    for (const auto fault : {FaultKind::ok, FaultKind::slow, FaultKind::slow_first_token}) {
      CAPTURE(to_string(fault));
      const Plan forwarded = stream_plan(d, fault, std::nullopt, true);
      REQUIRE(forwarded.passes_upstream_stream);
      CHECK(forwarded.frames.empty());
      const auto edit = stream_edit(d, forwarded);
      CHECK(edit.changes_nothing());  // deliver_stream then passes each frame as it comes
      const auto as_is = run_edit(d, forwarded);
      const auto derived = run_edit(d, stream_plan(d, fault));
      CHECK_FALSE(as_is.stopped);
      REQUIRE(as_is.frames.size() == derived.frames.size());
      for (std::size_t i = 0; i < as_is.frames.size(); ++i) {
        CHECK(as_is.frames[i].bytes == derived.frames[i].bytes);
        CHECK(as_is.frames[i].content == derived.frames[i].content);
      }
      CHECK(as_is.frames.size() == real_frames(d).size());
    }
    // A fault that edits the stream is still rendered when forwarded: its frames are the edit.
    const auto cut = stream_edit(d, stream_plan(d, FaultKind::stream_cut, 2, true));
    CHECK(cut.content_limit == 2);
    CHECK_FALSE(cut.changes_nothing());
    CHECK_FALSE(
        stream_edit(d, stream_plan(d, FaultKind::no_terminator, std::nullopt, true)).changes_nothing());
    CHECK_FALSE(stream_edit(d, stream_plan(d, FaultKind::stream_error, 1, true)).changes_nothing());
  }
}

TEST_CASE("a cut after more content frames than the real answer has ends where the real answer ends",
          "[proxy]") {
  for (const Dialect d : all_dialects) {
    CAPTURE(to_string(d));
    const auto plan = stream_plan(d, FaultKind::stream_error, 8);
    const auto out = run_edit(d, plan);
    CHECK(out.stopped);
    CHECK(out.content() == 6);
    CHECK(out.frames.back().bytes == plan.frames.back().bytes);
  }
}

TEST_CASE("the SSE splitter gives whole events whatever the read boundaries, LF or CRLF", "[proxy]") {
  const std::string stream = "data: a\n\nevent: x\ndata: b\n\ndata: c\r\n\r\ndata: d\n\n";
  for (std::size_t step = 1; step <= stream.size(); ++step) {
    FrameSplitter s;
    std::vector<std::string> got;
    for (std::size_t i = 0; i < stream.size(); i += step) {
      s.feed(std::string_view(stream).substr(i, step));
      while (auto e = s.next()) got.push_back(*e);
    }
    CAPTURE(step);
    REQUIRE(got.size() == 4);
    CHECK(got[0] == "data: a\n\n");
    CHECK(got[1] == "event: x\ndata: b\n\n");
    CHECK(got[2] == "data: c\r\n\r\n");
    CHECK(got[3] == "data: d\n\n");
    CHECK(s.rest().empty());
  }
}

TEST_CASE("the event stream splitter gives whole messages whatever the read boundaries", "[proxy]") {
  const std::vector<std::string> messages = {
      eventstream::encode(eventstream::event("messageStart", R"({"role":"assistant"})")),
      eventstream::encode(eventstream::event("contentBlockDelta", R"({"delta":{"text":"a\n\n"}})")),
      eventstream::encode(eventstream::exception("throttlingException", R"({"message":"slow down"})"))};
  std::string stream;
  for (const auto& m : messages) stream += m;
  for (std::size_t step = 1; step <= stream.size(); step += 7) {
    FrameSplitter s(StreamFraming::aws_eventstream);
    std::vector<std::string> got;
    for (std::size_t i = 0; i < stream.size(); i += step) {
      s.feed(std::string_view(stream).substr(i, step));
      while (auto e = s.next()) got.push_back(*e);
    }
    CAPTURE(step);
    CHECK(got == messages);  // byte for byte, even where a payload holds a blank line
    CHECK(s.rest().empty());
  }
  FrameSplitter cut(StreamFraming::aws_eventstream);  // a stream cut inside a message: the part is the rest
  cut.feed(std::string_view(stream).substr(0, messages[0].size() + 5));
  CHECK(cut.next() == messages[0]);
  CHECK_FALSE(cut.next());
  CHECK(cut.rest() == messages[1].substr(0, 5));
  FrameSplitter broken(StreamFraming::aws_eventstream);  // a length under the prelude's: never a frame
  broken.feed(std::string("\0\0\0\x03", 4) + std::string(20, 'x'));
  CHECK_FALSE(broken.next());
  CHECK(broken.rest().size() == 24);
}

TEST_CASE("bedrock's frames read by their decoded headers: exceptions and bad checksums are injected",
          "[proxy]") {
  using eventstream::encode;
  const auto d = Dialect::bedrock;
  CHECK(frame_role(d, encode(eventstream::event("contentBlockDelta", R"({"delta":{"text":"x"}})"))) ==
        FrameRole::content);
  CHECK(frame_role(d, encode(eventstream::event("messageStop", R"({"stopReason":"end_turn"})"))) ==
        FrameRole::terminator);
  CHECK(frame_role(d, encode(eventstream::exception("modelStreamErrorException", R"({"message":"m"})"))) ==
        FrameRole::injected);
  auto bad_crc = encode(eventstream::event("contentBlockDelta", R"({"delta":{"text":"x"}})"));
  bad_crc.back() = static_cast<char>(bad_crc.back() ^ 1);
  CHECK(frame_role(d, bad_crc) == FrameRole::injected);
  CHECK(frame_role(d, "not a frame") == FrameRole::injected);
  // InvokeModelWithResponseStream: a chunk's role is that of the Anthropic event inside it.
  const auto chunk = [](std::string_view event) {
    return encode(eventstream::event("chunk", R"({"bytes":")" + base64::encode(event) + R"("})"));
  };
  CHECK(frame_role(d, chunk(R"({"type":"content_block_delta","index":0,"delta":{"text":"x"}})")) ==
        FrameRole::content);
  CHECK(frame_role(d, chunk(R"({"type":"message_stop"})")) == FrameRole::terminator);
  CHECK(frame_role(d, chunk("not json")) == FrameRole::injected);
  CHECK(streamed_content_type("application/vnd.amazon.eventstream"));
  CHECK(streamed_content_type("Text/Event-Stream; charset=utf-8"));
  CHECK_FALSE(streamed_content_type("application/json"));
}

TEST_CASE("credentials are recognised in headers and masked in a query", "[proxy]") {
  for (auto h : {"authorization", "x-api-key", "api-key", "x-goog-api-key"}) CHECK(secret_header(h));
  CHECK_FALSE(secret_header("content-type"));
  CHECK(redact_target("/g/v1beta/models/m:streamGenerateContent?alt=sse&key=AIzaSECRET") ==
        "/g/v1beta/models/m:streamGenerateContent?alt=sse&key=REDACTED");
  CHECK(redact_target("/x?KEY=s&y=1") == "/x?KEY=REDACTED&y=1");
  CHECK(redact_target("/x/v1/chat/completions") == "/x/v1/chat/completions");
}

TEST_CASE("only plans that let the request reach the provider are forwarded", "[proxy]") {
  for (const Dialect d : all_dialects) {
    CHECK(forwards(stream_plan(d, FaultKind::ok)));
    CHECK(forwards(stream_plan(d, FaultKind::stream_cut)));
    CHECK(forwards(stream_plan(d, FaultKind::post_commit_timeout)));
    CHECK_FALSE(forwards(stream_plan(d, FaultKind::rate_429)));
    CHECK_FALSE(forwards(stream_plan(d, FaultKind::server_500)));
    CHECK_FALSE(forwards(stream_plan(d, FaultKind::connect_reset)));
    CHECK_FALSE(forwards(stream_plan(d, FaultKind::no_response)));
  }
}

TEST_CASE("a proxy script reads each route's upstream and refuses a URL that is not http", "[proxy]") {
  const auto s = parse_proxy_script(
      "[route.a]\ndialect = \"openai\"\nupstream = \"http://127.0.0.1:9/a\"\nscript = [{fault = \"ok\"}]\n"
      "[route.b]\ndialect = \"gemini\"\nscript = [{fault = \"ok\"}]\n",
      "p.toml");
  CHECK(s.upstreams.at("a") == "http://127.0.0.1:9/a");
  CHECK(s.upstreams.count("b") == 0);
  CHECK_THROWS_WITH(parse_proxy_script("[route.a]\nupstream = \"ftp://x\"\nscript = []\n", "p.toml"),
                    Catch::Contains("p.toml:2") && Catch::Contains("http://"));
}
