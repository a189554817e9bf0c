#include "llmchaos/client/limiter.hpp"

#include <algorithm>
#include <limits>

namespace llmchaos::client {
namespace {
constexpr double minute_ms = 60'000;
constexpr double day_ms = 24 * 60 * minute_ms;
}  // namespace

int estimate_tokens(std::string_view text) {
  return static_cast<int>((text.size() + 3) / 4);
}

SlidingWindow::SlidingWindow(double window_ms, int limit) : window_ms_(window_ms), limit_(limit) {}

void SlidingWindow::expire(double now_ms) {
  // An event at t counts while now < t + window.
  while (!times_.empty() && times_.front() + window_ms_ <= now_ms) times_.pop_front();
}

double SlidingWindow::wait_ms(double now_ms) {
  expire(now_ms);
  if (static_cast<int>(times_.size()) < limit_) return 0;
  if (limit_ <= 0) return std::numeric_limits<double>::infinity();
  // The event that must leave for one more to fit.
  return times_[times_.size() - static_cast<std::size_t>(limit_)] + window_ms_ - now_ms;
}

void SlidingWindow::record(double now_ms) {
  expire(now_ms);
  times_.push_back(now_ms);
}

int SlidingWindow::count(double now_ms) {
  expire(now_ms);
  return static_cast<int>(times_.size());
}

TokenBucket::TokenBucket(double capacity, double period_ms, double now_ms)
    : capacity_(capacity), per_ms_(capacity / period_ms), level_(capacity), at_ms_(now_ms) {}

double TokenBucket::available(double now_ms) const {
  return std::min(capacity_, level_ + std::max(0.0, now_ms - at_ms_) * per_ms_);
}

void TokenBucket::refill(double now_ms) {
  level_ = available(now_ms);
  at_ms_ = std::max(at_ms_, now_ms);
}

double TokenBucket::wait_ms(double tokens, double now_ms) const {
  if (tokens > capacity_) return std::numeric_limits<double>::infinity();
  const double have = available(now_ms);
  return have >= tokens ? 0.0 : (tokens - have) / per_ms_;
}

void TokenBucket::take(double tokens, double now_ms) {
  refill(now_ms);
  level_ -= tokens;
}

KeyLimiter::KeyLimiter(const RateLimits& limits, double now_ms) : limits_(limits) {
  if (limits.requests_per_minute) per_minute_.emplace(minute_ms, *limits.requests_per_minute);
  if (limits.requests_per_day) per_day_.emplace(day_ms, *limits.requests_per_day);
  if (limits.tokens_per_minute) tokens_.emplace(*limits.tokens_per_minute, minute_ms, now_ms);
}

LimitVerdict KeyLimiter::try_acquire(double now_ms, double tokens) {
  // Check everything first, so a request refused by one limit is not counted by another.
  LimitVerdict v;
  auto consider = [&](double wait, std::string_view name) {
    if (wait > v.wait_ms) {
      v.allowed = false;
      v.wait_ms = wait;
      v.limit = name;
    }
  };
  if (per_minute_) consider(per_minute_->wait_ms(now_ms), "requests_per_minute");
  if (per_day_) consider(per_day_->wait_ms(now_ms), "requests_per_day");
  if (tokens_) consider(tokens_->wait_ms(tokens, now_ms), "tokens_per_minute");
  if (!v.allowed) return v;
  if (per_minute_) per_minute_->record(now_ms);
  if (per_day_) per_day_->record(now_ms);
  if (tokens_) tokens_->take(tokens, now_ms);
  return v;
}

void KeyLimiter::settle(double estimated_tokens, double actual_tokens, double now_ms) {
  if (tokens_) tokens_->take(actual_tokens - estimated_tokens, now_ms);
}

void RateLimiter::configure(const std::string& key, const RateLimits& limits, double now_ms) {
  std::lock_guard lock(mutex_);
  keys_.insert_or_assign(key, KeyLimiter(limits, now_ms));
}

KeyLimiter& RateLimiter::at(const std::string& key, double now_ms) {
  auto it = keys_.find(key);
  if (it == keys_.end()) it = keys_.emplace(key, KeyLimiter(defaults_, now_ms)).first;
  return it->second;
}

LimitVerdict RateLimiter::try_acquire(const std::string& key, double now_ms, double tokens) {
  std::lock_guard lock(mutex_);
  return at(key, now_ms).try_acquire(now_ms, tokens);
}

void RateLimiter::settle(const std::string& key, double estimated_tokens, double actual_tokens,
                         double now_ms) {
  std::lock_guard lock(mutex_);
  at(key, now_ms).settle(estimated_tokens, actual_tokens, now_ms);
}

std::size_t RateLimiter::keys() const {
  std::lock_guard lock(mutex_);
  return keys_.size();
}

}  // namespace llmchaos::client
