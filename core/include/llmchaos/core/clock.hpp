#pragma once
// Injected time. Policy code never reads std::chrono clocks directly: it takes a Clock&,
// so the same code runs under the real clock and under a virtual one (tests, --virtual-time).
#include <atomic>
#include <chrono>
#include <cstdint>
#include <mutex>

namespace llmchaos {

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since this clock's epoch (fractional; monotonic).
  virtual double now_ms() const = 0;
  // Block (real clock) or advance (virtual clock) for `ms`.
  virtual void sleep_ms(double ms) = 0;
};

// Monotonic wall clock; epoch = construction.
class SteadyClock final : public Clock {
 public:
  SteadyClock() : start_(std::chrono::steady_clock::now()) {}
  double now_ms() const override;
  void sleep_ms(double ms) override;

 private:
  std::chrono::steady_clock::time_point start_;
};

// Virtual clock: time moves only when told to. sleep_ms advances it. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(double start_ms = 0) : now_(start_ms) {}
  double now_ms() const override;
  void sleep_ms(double ms) override { advance(ms); }
  void advance(double ms);
  void set(double ms);

 private:
  mutable std::mutex mutex_;
  double now_;
};

}  // namespace llmchaos
