#include "llmchaos/client/sse.hpp"

namespace llmchaos::client {

void SseParser::feed(std::string_view bytes, std::vector<SseEvent>& out) {
  for (char c : bytes) {
    if (c == '\n' && after_cr_) {  // the \n of a \r\n already ended the line
      after_cr_ = false;
      continue;
    }
    after_cr_ = c == '\r';
    if (c == '\r' || c == '\n') {
      end_line(out);
      continue;
    }
    if (line_.size() < max_event_bytes_)
      line_.push_back(c);
    else
      overflowed_ = true;
  }
}

void SseParser::end_line(std::vector<SseEvent>& out) {
  std::string_view line = line_;
  if (at_start_ && line.substr(0, 3) == "\xEF\xBB\xBF") line.remove_prefix(3);  // a BOM may open the stream
  at_start_ = false;
  if (line.empty()) {
    dispatch(out);
  } else if (line.front() != ':') {  // ':' starts a comment
    auto colon = line.find(':');
    std::string_view field = line.substr(0, colon);
    std::string_view value;
    if (colon != std::string_view::npos) {
      value = line.substr(colon + 1);
      if (!value.empty() && value.front() == ' ') value.remove_prefix(1);
    }
    if (field == "data") {
      if (has_data_) current_.data.push_back('\n');
      if (current_.data.size() + value.size() <= max_event_bytes_)
        current_.data.append(value);
      else
        overflowed_ = true;
      has_data_ = true;
      has_fields_ = true;
    } else if (field == "event") {
      current_.event.assign(value);
      has_fields_ = true;
    } else if (field == "id") {
      if (value.find('\0') == std::string_view::npos) current_.id.assign(value);
      has_fields_ = true;
    } else if (field == "retry") {
      has_fields_ = true;  // reconnection time: meaningless for a single request
    }                      // unknown fields are ignored (spec)
  }
  line_.clear();
}

void SseParser::dispatch(std::vector<SseEvent>& out) {
  // The spec dispatches only events with a data buffer; a lone "event:" block is dropped.
  if (has_data_) {
    out.push_back(current_);
    ++dispatched_;
  }
  std::string id = std::move(current_.id);  // the last event id persists across events
  current_ = SseEvent{};
  current_.id = std::move(id);
  has_fields_ = false;
  has_data_ = false;
}

}  // namespace llmchaos::client
