// The SSE splitter and a frame's role (stream_edit.hpp): what `llmchaos proxy` reads from a real
// upstream's stream. What each dialect's frames are is its own trait (DialectSpec::frame_role,
// done_data); this unit only splits a frame into its event name and data. Pure functions.
#include <boost/json.hpp>

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

}  // namespace

FrameRole frame_role(Dialect dialect, std::string_view frame) {
  const auto& spec = dialect_spec(dialect);
  const Event e = read_event(frame);
  if (!spec.done_data.empty() && e.data == spec.done_data) return FrameRole::terminator;
  if (e.data.empty()) return FrameRole::structure;  // a comment or keep-alive line
  boost::system::error_code ec;
  const auto v = json::parse(e.data, ec);
  if (ec || !v.is_object()) return FrameRole::injected;
  const auto& o = v.get_object();
  if (o.contains("error")) return FrameRole::injected;
  return spec.frame_role(e.name, o);  // the rest is the dialect's own grammar (dialect.hpp)
}

void SseSplitter::feed(std::string_view bytes) {
  if (start_ > 0 && start_ >= buffer_.size() / 2) {  // drop what was handed out, now and then
    buffer_.erase(0, start_);
    scanned_ -= start_;
    start_ = 0;
  }
  buffer_.append(bytes);
}

std::optional<std::string> SseSplitter::next() {
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

std::string SseSplitter::rest() {
  std::string out = buffer_.substr(start_);
  buffer_.clear();
  start_ = scanned_ = 0;
  return out;
}

}  // namespace llmchaos::proxy
