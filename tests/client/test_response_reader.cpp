// ResponseReader on bodies written by hand: a stream answered as one JSON array of chunks (Gemini's
// :streamGenerateContent without alt=sse, what the real API sends REST users) reads like its SSE form.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "llmchaos/client/response_reader.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

namespace {

std::string chunk(const std::string& text, const char* finish = nullptr) {
  std::string c =
      R"({"candidates":[{"content":{"role":"model","parts":[{"text":")" + text + R"("}]},"index":0)";
  if (finish) c += std::string(R"(,"finishReason":")") + finish + "\"";
  return c + R"(}],"usageMetadata":{"promptTokenCount":2},"modelVersion":"gemini-x"})";
}

struct Read {
  AttemptResult result;
  std::vector<std::string> tokens;
};

Read read(const std::string& body, const std::string& content_type, bool split) {
  AttemptRequest req;
  req.endpoint = Endpoint{"primary", Dialect::gemini, "http://x"};
  req.stream = true;
  Read out;
  const ResponseReader::TokenFn on_token = [&](std::string_view t) { out.tokens.emplace_back(t); };
  ResponseReader reader(req, on_token);
  reader.head(200, {{"content-type", content_type}});
  if (split) {
    for (char c : body) reader.feed(std::string_view(&c, 1));  // split anywhere
  } else {
    reader.feed(body);
  }
  reader.end();
  out.result = reader.take();
  return out;
}

}  // namespace

TEST_CASE("response reader: a Gemini stream as one JSON array reads like its SSE form",
          "[response_reader][gemini]") {
  const std::string array =
      "[" + chunk("alpha ") + ",\r\n" + chunk("beta") + ",\r\n" + chunk("", "STOP") + "]";
  const std::string sse = "data: " + chunk("alpha ") + "\r\n\r\ndata: " + chunk("beta") +
                          "\r\n\r\ndata: " + chunk("", "STOP") + "\r\n\r\n";
  const bool split = GENERATE(false, true);
  const auto a = read(array, "application/json; charset=UTF-8", split);
  const auto s = read(sse, "text/event-stream", split);
  CHECK(a.result.event == TransportEvent::none);
  CHECK(a.result.text == "alpha beta");
  CHECK(a.result.text == s.result.text);
  CHECK(a.tokens == s.tokens);
  CHECK(a.result.content_events == 2);
  CHECK(a.result.finish_reason == "STOP");
  CHECK(a.result.model == "gemini-x");
}

TEST_CASE("response reader: a JSON-array stream without its final chunk, or broken, is not a clean answer",
          "[response_reader][gemini]") {
  // Closed cleanly but without the chunk carrying finishReason: the dialect's end never came.
  CHECK(read("[" + chunk("alpha") + "]", "application/json", false).result.event ==
        TransportEvent::missing_terminator);
  // Not valid JSON: a malformed answer, not a crash.
  CHECK(read("[" + chunk("alpha") + ",{", "application/json", false).result.event ==
        TransportEvent::malformed_event);
  // A plain JSON object to a stream request is still read as the plain answer it is.
  const auto plain = read(chunk("whole answer", "STOP"), "application/json", false);
  CHECK(plain.result.event == TransportEvent::none);
  CHECK(plain.result.text == "whole answer");
}
