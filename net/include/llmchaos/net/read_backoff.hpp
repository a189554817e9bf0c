#pragma once
// Whether a connection tries a plain read right after answering (before it waits on the reactor). Under
// load the client's next request is often there by then, and the read saves a wait; a client that sends
// its next request only after reading the answer (one at a time, as an SDK does) never has it there, and
// each miss is a recv that comes back empty plus a pass through the scheduler. So a miss skips the try
// for the next `span` requests, and the span doubles with each miss in a row (15, 31, 63, ... up to
// 1023): a client one at a time pays for a try once in a thousand requests, not once in sixteen; a hit
// brings the span back to its start. Pure: no I/O, one per connection, not thread-safe.
// In namespace llmchaos, not llmchaos::net: files alias boost::asio as `net` inside llmchaos.
#include <algorithm>

namespace llmchaos {

class ReadBackoff {
 public:
  static constexpr int first_span = 15;
  static constexpr int max_span = 1023;

  // Whether to try the read for this request (a skipped request counts down the span).
  bool try_now() {
    if (skips_ == 0) return true;
    --skips_;
    return false;
  }
  // The try found nothing to read.
  void missed() {
    skips_ = span_;
    span_ = std::min(span_ * 2 + 1, max_span);
  }
  // The try found the next request.
  void found() { span_ = first_span; }

 private:
  int span_ = first_span;
  int skips_ = 0;
};

}  // namespace llmchaos
