#include "llmchaos/client/queue.hpp"

namespace llmchaos::client {

bool RequestQueue::push(QueuedRequest item) {
  std::lock_guard lock(mutex_);
  if (items_.size() >= capacity_) return false;
  items_.push_back(std::move(item));
  return true;
}

std::optional<QueuedRequest> RequestQueue::pop() {
  std::lock_guard lock(mutex_);
  if (items_.empty()) return std::nullopt;
  auto item = std::move(items_.front());
  items_.pop_front();
  return item;
}

bool RequestQueue::full() const {
  std::lock_guard lock(mutex_);
  return items_.size() >= capacity_;
}

std::size_t RequestQueue::size() const {
  std::lock_guard lock(mutex_);
  return items_.size();
}

std::vector<std::string> RequestQueue::operation_ids() const {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& item : items_) out.push_back(item.request.operation_id);
  return out;
}

}  // namespace llmchaos::client
