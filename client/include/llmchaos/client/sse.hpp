#pragma once
// Incremental Server-Sent Events parser (WHATWG "event stream interpretation"), pure: feed bytes split
// anywhere, get whole events out. Lines end in \n, \r\n or \r (a \r at the end of one chunk and a \n
// at the start of the next are one line end); a blank line dispatches; `:` lines are comments.
// Dialect meaning (what an event says) lives in dialect_codec.hpp, not here.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace llmchaos::client {

struct SseEvent {
  std::string event;  // "event:" field ("" when absent)
  std::string data;   // "data:" lines joined by \n
  std::string id;     // "id:" field
  bool operator==(const SseEvent&) const = default;
};

class SseParser {
 public:
  // Events or lines larger than this are cut off (`overflowed()` tells); keeps hostile input bounded.
  explicit SseParser(std::size_t max_event_bytes = 4 * 1024 * 1024) : max_event_bytes_(max_event_bytes) {}

  // Appends every event completed by `bytes` to `out`.
  void feed(std::string_view bytes, std::vector<SseEvent>& out);
  std::vector<SseEvent> feed(std::string_view bytes) {
    std::vector<SseEvent> out;
    feed(bytes, out);
    return out;
  }

  // True when bytes of an unfinished event (or line) are buffered: at the end of the body this means
  // the last frame was not terminated (the spec discards it).
  bool pending() const { return !line_.empty() || has_fields_; }
  bool overflowed() const { return overflowed_; }
  std::size_t events_dispatched() const { return dispatched_; }

 private:
  void end_line(std::vector<SseEvent>& out);
  void dispatch(std::vector<SseEvent>& out);

  std::size_t max_event_bytes_;
  std::string line_;  // the current line, without its end
  bool at_start_ = true;
  bool after_cr_ = false;    // the last byte was \r: a following \n belongs to the same line end
  bool has_fields_ = false;  // a field of the current event was seen
  bool has_data_ = false;
  SseEvent current_;
  bool overflowed_ = false;
  std::size_t dispatched_ = 0;
};

}  // namespace llmchaos::client
