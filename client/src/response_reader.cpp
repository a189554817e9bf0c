#include "llmchaos/client/response_reader.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <boost/json.hpp>
#include <cctype>

namespace llmchaos::client {

ResponseReader::ResponseReader(const AttemptRequest& req, const TokenFn& on_token)
    : req_(req),
      on_token_(on_token),
      codec_(codec_for(req.endpoint.dialect)),
      where_(fmt::format("route {} attempt {}", req.endpoint.route, req.attempt_number)) {}

void ResponseReader::fail(TransportEvent event, const std::string& what) {
  r_.event = event;
  r_.error = where_ + ": " + what;
}

void ResponseReader::head(int status, Headers headers) {
  r_.status = status;
  r_.headers = std::move(headers);
  std::string content_type;
  for (const auto& [name, value] : r_.headers)
    if (name == "content-type") content_type = value;
  std::transform(content_type.begin(), content_type.end(), content_type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  framed_ = r_.status / 100 == 2 && req_.stream && content_type.rfind("application/json", 0) != 0;
}

bool ResponseReader::feed(std::string_view bytes) {
  if (stopped_ || bytes.empty()) return !stopped_;
  if (!framed_) {
    body_.append(bytes);
    return true;
  }
  if (codec_.framing == StreamFraming::eventstream) {
    feed_frames(bytes);
    return !stopped_;
  }
  events_.clear();
  parser_.feed(bytes, events_);
  for (const auto& ev : events_)
    if (!on_event(ev)) break;
  return !stopped_;
}

void ResponseReader::feed_frames(std::string_view bytes) {
  frames_.feed(bytes);
  while (auto frame = frames_.next())
    if (!apply(codec_.on_frame(*frame, answer_), frame->payload)) return;
  if (frames_.error() == eventstream::DecodeError::none) return;
  // A wrong length or checksum: the frame's bytes cannot be trusted, nor anything after them.
  ++r_.events;
  r_.event = TransportEvent::malformed_event;
  r_.error = fmt::format("{}: event stream frame: {}", where_, eventstream::to_string(frames_.error()));
  stopped_ = true;
}

bool ResponseReader::on_event(const SseEvent& ev) {
  return apply(codec_.on_event(ev, answer_), ev.data);
}

bool ResponseReader::apply(const EventResult& er, std::string_view data) {
  ++r_.events;
  r_.terminated = r_.terminated || er.end;
  if (er.kind == EventKind::content) {
    ++r_.content_events;
    on_token_(er.token);
  } else if (er.kind == EventKind::error || er.kind == EventKind::malformed) {
    r_.event =
        er.kind == EventKind::error ? TransportEvent::stream_error_event : TransportEvent::malformed_event;
    r_.body = data;
    stopped_ = true;
  }
  return !stopped_;
}

bool ResponseReader::json_array_stream() {
  std::size_t i = 0;
  while (i < body_.size() && std::isspace(static_cast<unsigned char>(body_[i]))) ++i;
  if (i == body_.size() || body_[i] != '[') return false;
  boost::system::error_code ec;
  const auto v = boost::json::parse(body_, ec);
  if (ec || !v.is_array()) {
    r_.event = TransportEvent::malformed_event;
    r_.error = where_ + ": the stream's JSON array is not valid JSON";
    return true;
  }
  // Each element is one chunk, read as the dialect reads one SSE event's data.
  for (const auto& chunk : v.get_array()) {
    SseEvent ev;
    ev.data = boost::json::serialize(chunk);
    if (!on_event(ev)) return true;
  }
  if (!r_.terminated) r_.event = TransportEvent::missing_terminator;
  return true;
}

void ResponseReader::end() {
  if (stopped_) return;  // r_.event already says which
  if (framed_) {
    if (!r_.terminated) r_.event = TransportEvent::missing_terminator;
    return;
  }
  // A stream asked for and answered as one JSON array of chunks (Gemini's :streamGenerateContent
  // without alt=sse): the same chunks as the SSE events, read once the array is whole.
  if (req_.stream && r_.status / 100 == 2 && json_array_stream()) return;
  if (r_.status / 100 == 2) {
    if (!codec_.parse_answer(body_, answer_)) {
      r_.event = TransportEvent::malformed_event;
      r_.error = where_ + ": the answer is not the dialect's JSON";
    } else if (!answer_.text.empty()) {
      r_.content_events = 1;  // a plain answer becomes visible at once
      on_token_(answer_.text);
    }
  }
  r_.body = std::move(body_);
}

void ResponseReader::broken(bool idle, const std::string& detail) {
  if (stopped_ || (framed_ && r_.terminated)) return;
  fail(idle ? TransportEvent::stream_idle_timeout : TransportEvent::stream_closed,
       (idle ? "idle longer than the attempt timeout: " : "body cut: ") + detail);
  if (!framed_ && r_.status / 100 != 2) r_.body = std::move(body_);
}

AttemptResult ResponseReader::take() {
  r_.text = std::move(answer_.text);
  r_.tool_call = answer_.tool_call;
  r_.tool_name = std::move(answer_.tool_name);
  r_.tool_call_id = std::move(answer_.tool_call_id);
  r_.tool_arguments = std::move(answer_.tool_arguments);
  r_.finish_reason = std::move(answer_.finish_reason);
  r_.model = answer_.model.empty() && codec_.model_from_request ? req_.model : std::move(answer_.model);
  r_.input_tokens = answer_.input_tokens;
  r_.output_tokens = answer_.output_tokens;
  if (answer_.background) r_.response_id = std::move(answer_.response_id);
  r_.last_sequence = answer_.last_sequence;
  r_.error_type = std::move(answer_.error_type);
  return std::move(r_);
}

}  // namespace llmchaos::client
