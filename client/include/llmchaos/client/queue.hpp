#pragma once
// The in-process queue outlet: a request the decision sent to `queue` waits here for a later
// redelivery (ClientStack::redeliver_next / drain), carrying the budget it already spent, so the
// redelivery's attempts count in the same ledger. Thread-safe; bounded.
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmchaos/client/budget.hpp"
#include "llmchaos/client/executor.hpp"

namespace llmchaos::client {

struct QueuedRequest {
  WorkflowRequest request;  // operation id set: the redelivery sends the same Idempotency-Key
  std::vector<std::pair<AttemptKind, double>> spent;  // attempts already made (kind, cost), in order
  double enqueued_at_ms = 0;
  int deliveries = 1;  // deliveries so far (the first execute() is one)
  std::string reason;  // the failure that sent it here
};

class RequestQueue {
 public:
  explicit RequestQueue(std::size_t capacity = 10000) : capacity_(capacity) {}
  bool push(QueuedRequest item);  // false when full (the caller must take another outlet)
  bool full() const;              // a push now would fail (the decision's rule 7 input)
  std::optional<QueuedRequest> pop();
  std::size_t size() const;
  std::vector<std::string> operation_ids() const;  // in queue order

 private:
  mutable std::mutex mutex_;
  std::size_t capacity_;
  std::deque<QueuedRequest> items_;
};

}  // namespace llmchaos::client
