// The frame splitter and a frame's role (stream_edit.hpp): what `llmchaos proxy` reads from a real
// upstream's stream. What each dialect's frames are is its own trait (DialectSpec::frame_role,
// done_data, framing); this unit only splits a stream into frames and a frame into its event name and
// data. Pure functions.
#include <boost/beast/core/string.hpp>
#include <boost/json.hpp>
#include <boost/json/monotonic_resource.hpp>
#include <cstddef>
#include <cstdint>

#include "llmchaos/core/eventstream.hpp"
#include "llmchaos/mockprovider/dialect.hpp"
#include "llmchaos/proxy/stream_edit.hpp"

namespace json = boost::json;

namespace llmchaos::proxy {

// The mock's vocabulary (plans, the forward hook, dialects, scripts) the proxy is written in.
using mock::dialect_spec;
using mock::FrameRole;
namespace {

struct Event {
  std::string_view name;
  std::string data;
};

// The event's name and its data lines (joined by "\n", as the SSE spec says).
Event read_event(std::string_view frame) {
  Event e;
  bool first_data = true;
  while (!frame.empty()) {
    const auto eol = frame.find('\n');
    auto line = frame.substr(0, eol);
    frame = eol == std::string_view::npos ? std::string_view{} : frame.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const auto field = [&](std::string_view name) -> std::optional<std::string_view> {
      if (line.substr(0, name.size()) != name || line.size() <= name.size() || line[name.size()] != ':')
        return std::nullopt;
      auto v = line.substr(name.size() + 1);
      if (!v.empty() && v.front() == ' ') v.remove_prefix(1);
      return v;
    };
    if (auto v = field("event")) e.name = *v;
    if (auto v = field("data")) {
      if (!first_data) e.data += '\n';
      e.data += *v;
      first_data = false;
    }
  }
  return e;
}

// A decoded event stream frame: an event's type and JSON payload go to the dialect's grammar.
FrameRole message_role(const mock::DialectSpec& spec, std::string_view frame) {
  const auto decoded = eventstream::decode(frame);
  if (decoded.error != eventstream::DecodeError::none || decoded.consumed != frame.size())
    return FrameRole::injected;
  const auto& m = *decoded.message;
  if (m.text(":message-type") != "event") return FrameRole::injected;  // exception and error frames
  boost::system::error_code ec;
  const auto v = json::parse(m.payload, ec);
  if (ec || !v.is_object()) return FrameRole::injected;
  return spec.frame_role(m.text(":event-type"), v.get_object());
}

}  // namespace

mock::StreamFraming stream_framing(Dialect dialect) {
  return dialect_spec(dialect).framing;
}

bool streamed_content_type(std::string_view content_type) {
  using boost::beast::iequals;
  static constexpr std::string_view types[] = {"text/event-stream", "application/vnd.amazon.eventstream"};
  for (const auto t : types)
    if (content_type.size() >= t.size() && iequals(content_type.substr(0, t.size()), t)) return true;
  return false;
}

FrameRole frame_role(Dialect dialect, std::string_view frame) {
  const auto& spec = dialect_spec(dialect);
  if (spec.framing == mock::StreamFraming::aws_eventstream) return message_role(spec, frame);
  const Event e = read_event(frame);
  if (!spec.done_data.empty() && e.data == spec.done_data) return FrameRole::terminator;
  if (e.data.empty()) return FrameRole::structure;  // a comment or keep-alive line
  // Parsed into a scratch arena on the stack (a frame is one small object): no allocation and no free per
  // JSON node, which were most of what reading a frame's role cost (bench/README.md, proxy).
  alignas(std::max_align_t) unsigned char scratch[4096];
  json::monotonic_resource arena(scratch, sizeof scratch);
  boost::system::error_code ec;
  const auto v = json::parse(e.data, ec, &arena);
  if (ec || !v.is_object()) return FrameRole::injected;
  const auto& o = v.get_object();
  if (o.contains("error")) return FrameRole::injected;
  return spec.frame_role(e.name, o);  // the rest is the dialect's own grammar (dialect.hpp)
}

void FrameSplitter::feed(std::string_view bytes) {
  if (start_ > 0 && start_ >= buffer_.size() / 2) {  // drop what was handed out, now and then
    buffer_.erase(0, start_);
    scanned_ -= start_;
    start_ = 0;
  }
  buffer_.append(bytes);
}

std::optional<std::string> FrameSplitter::next() {
  return framing_ == mock::StreamFraming::aws_eventstream ? next_message() : next_sse();
}

// A message is as long as its prelude's first four bytes say (big-endian).
std::optional<std::string> FrameSplitter::next_message() {
  const std::size_t have = buffer_.size() - start_;
  if (have < eventstream::prelude_bytes) return std::nullopt;
  std::uint32_t total = 0;
  for (std::size_t i = 0; i < 4; ++i) total = total << 8 | static_cast<unsigned char>(buffer_[start_ + i]);
  if (total < eventstream::overhead_bytes || total > eventstream::max_message_bytes || have < total)
    return std::nullopt;  // more to come, or a broken length: rest() hands the bytes on as they are
  std::string message = buffer_.substr(start_, total);
  start_ += total;
  scanned_ = start_;
  return message;
}

std::optional<std::string> FrameSplitter::next_sse() {
  // An event ends at an empty line: "\n\n", "\r\n\r\n" (or a mix, "\n\r\n").
  for (std::size_t i = std::max(scanned_, start_); i < buffer_.size(); ++i) {
    if (buffer_[i] != '\n') continue;
    std::size_t j = i + 1;
    if (j < buffer_.size() && buffer_[j] == '\r') ++j;
    if (j < buffer_.size() && buffer_[j] == '\n') {
      std::string event = buffer_.substr(start_, j + 1 - start_);
      start_ = scanned_ = j + 1;
      return event;
    }
    if (j >= buffer_.size()) {  // the separator may be split across reads: look again from here
      scanned_ = i;
      return std::nullopt;
    }
  }
  scanned_ = buffer_.size();
  return std::nullopt;
}

std::string FrameSplitter::rest() {
  std::string out = buffer_.substr(start_);
  buffer_.clear();
  start_ = scanned_ = 0;
  return out;
}

}  // namespace llmchaos::proxy
