#pragma once
// One of ServerOptions::max_held_connections hold slots (post_commit_timeout, no_response), released when
// the hold ends (or its frame is torn down). Shared by the HTTP/1.1 session and an HTTP/2 stream.
#include <atomic>
#include <cstddef>

namespace llmchaos::mock {

class HoldSlot {
 public:
  HoldSlot(std::atomic<std::size_t>& holds, std::size_t limit) : holds_(holds) {
    taken_ = holds_.fetch_add(1) < limit;
    if (!taken_) holds_.fetch_sub(1);
  }
  ~HoldSlot() {
    if (taken_) holds_.fetch_sub(1);
  }
  HoldSlot(const HoldSlot&) = delete;
  HoldSlot& operator=(const HoldSlot&) = delete;
  bool taken() const { return taken_; }

 private:
  std::atomic<std::size_t>& holds_;
  bool taken_;
};

}  // namespace llmchaos::mock
