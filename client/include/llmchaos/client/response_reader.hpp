#pragma once
// What a transport does with an answer once bytes come back: the head, the body as it arrives (SSE
// through SseParser, or AWS event stream frames through eventstream::Decoder, as the route's dialect
// codec's framing says; one on_token per visible token), and how the body ended, into one AttemptResult. Pure
// (no I/O, no clock), so the live HTTP transport and the virtual-time transport read answers with the same
// code and give the same results for the same bytes.
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmchaos/client/dialect_codec.hpp"
#include "llmchaos/client/sse.hpp"
#include "llmchaos/client/transport.hpp"

namespace llmchaos::client {

class ResponseReader {
 public:
  using TokenFn = std::function<void(std::string_view token)>;
  // `req` and `on_token` must outlive the reader.
  ResponseReader(const AttemptRequest& req, const TokenFn& on_token);

  // "route R attempt N": the context every error text starts with.
  const std::string& where() const { return where_; }
  // The attempt failed before or inside the head: `event` with "where: what".
  void fail(TransportEvent event, const std::string& what);

  // The head arrived (header names lower-cased). A 2xx answer to a stream request that is not JSON is
  // read as a stream in the codec's framing (SSE, or event stream frames).
  void head(int status, Headers headers);
  bool sse() const { return framed_ && codec_.framing == StreamFraming::sse; }
  // Body bytes, split anywhere. False once the stream must stop: an in-stream error or malformed event,
  // a frame whose length or checksum is wrong (the transport then hangs up).
  bool feed(std::string_view bytes);
  bool stopped() const { return stopped_; }
  // The body ended cleanly at the HTTP level: a missing end sentinel, an unreadable or contract answer,
  // the one token of a plain answer. A stream answered as one JSON array of chunks (Gemini without
  // alt=sse) is read here, chunk by chunk through the dialect's event reader.
  void end();
  // The body broke off: the attempt timeout passed while idle (`idle`), or the connection closed. A
  // stream whose end the dialect already announced is complete, whatever happens after.
  void broken(bool idle, const std::string& detail);

  AttemptResult& result() { return r_; }
  // The result with the answer's fields filled in; the reader is spent afterwards.
  AttemptResult take();

 private:
  bool on_event(const SseEvent& ev);  // false once the stream must stop
  void feed_frames(std::string_view bytes);
  bool apply(const EventResult& er, std::string_view data);  // one event's meaning; false once it must stop
  bool json_array_stream();  // the body is a JSON array of chunks: read it (true), else false
  const AttemptRequest& req_;
  const TokenFn& on_token_;
  const DialectCodec& codec_;
  std::string where_;
  AttemptResult r_;
  Answer answer_;
  SseParser parser_;
  std::vector<SseEvent> events_;
  eventstream::Decoder frames_;
  std::string body_;     // plain answers (and error bodies)
  bool framed_ = false;  // a 2xx stream read event by event (SSE or frames), not as one body
  bool stopped_ = false;
};

}  // namespace llmchaos::client
