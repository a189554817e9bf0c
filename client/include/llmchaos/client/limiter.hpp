#pragma once
// Rate limiting per key (API key / tier), shared by every request of that key and never rebuilt per
// request: an exact sliding window for requests per minute and per day, and a token bucket for tokens
// per minute. Over a limit, the answer is the wait until the request would fit. Times are passed in
// (read from the injected Clock).
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace llmchaos::client {

// Exact sliding window: remembers the time of every admitted event still inside the window
// (memory O(limit)), so the wait is exact rather than a bucket approximation.
class SlidingWindow {
 public:
  SlidingWindow(double window_ms, int limit);
  // 0 when one more event fits now, else the ms until the oldest event leaves the window.
  double wait_ms(double now_ms);
  void record(double now_ms);
  int count(double now_ms);
  int limit() const { return limit_; }

 private:
  void expire(double now_ms);
  double window_ms_;
  int limit_;
  std::deque<double> times_;
};

// Token bucket: `capacity` tokens, refilled continuously at capacity per `period_ms`. It starts full.
class TokenBucket {
 public:
  TokenBucket(double capacity, double period_ms, double now_ms);
  double available(double now_ms) const;
  // 0 when `tokens` fit now; the refill time otherwise; infinity when `tokens` exceed the capacity.
  double wait_ms(double tokens, double now_ms) const;
  // Take tokens; the level may go negative (a debt repaid by the refill) when actual use exceeded the
  // estimate that was admitted.
  void take(double tokens, double now_ms);
  double capacity() const { return capacity_; }

 private:
  void refill(double now_ms);
  double capacity_;
  double per_ms_;
  double level_;
  double at_ms_;
};

struct RateLimits {
  std::optional<int> requests_per_minute;
  std::optional<int> requests_per_day;
  std::optional<double> tokens_per_minute;
};

struct LimitVerdict {
  bool allowed = true;
  double wait_ms = 0;      // when not allowed: until the request would fit (infinity: never)
  std::string_view limit;  // the binding limit: "requests_per_minute", "requests_per_day",
                           // "tokens_per_minute"; empty when allowed
};

// Rough token count of a text (4 characters a token): a tier's estimate of a prompt before the answer
// (the gateway adds the request's max_tokens; settle() charges the answer's real usage after).
int estimate_tokens(std::string_view text);

// One key's state: every limit is checked first; only a request that fits all of them is counted.
class KeyLimiter {
 public:
  KeyLimiter(const RateLimits& limits, double now_ms);
  // `tokens`: the request's estimated tokens (prompt + max output) charged to the token bucket.
  LimitVerdict try_acquire(double now_ms, double tokens = 0);
  // After the answer: charge the difference between actual and estimated tokens (either sign).
  void settle(double estimated_tokens, double actual_tokens, double now_ms);
  const RateLimits& limits() const { return limits_; }

 private:
  RateLimits limits_;
  std::optional<SlidingWindow> per_minute_;
  std::optional<SlidingWindow> per_day_;
  std::optional<TokenBucket> tokens_;
};

// The shared registry: one KeyLimiter per key, created on first use and kept. Thread-safe (gateway
// sessions call it concurrently).
class RateLimiter {
 public:
  // Keys never configured get `defaults` on first use.
  explicit RateLimiter(RateLimits defaults = {}) : defaults_(defaults) {}
  // Set (or replace, resetting its state) the limits of a key.
  void configure(const std::string& key, const RateLimits& limits, double now_ms);
  LimitVerdict try_acquire(const std::string& key, double now_ms, double tokens = 0);
  void settle(const std::string& key, double estimated_tokens, double actual_tokens, double now_ms);
  std::size_t keys() const;

 private:
  KeyLimiter& at(const std::string& key, double now_ms);  // caller holds mutex_
  RateLimits defaults_;
  mutable std::mutex mutex_;
  std::map<std::string, KeyLimiter, std::less<>> keys_;
};

}  // namespace llmchaos::client
