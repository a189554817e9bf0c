#pragma once
// Injected time. Policy code never reads std::chrono clocks directly: it takes a Clock&,
// so the same code runs under the real clock and under a virtual one (tests, --virtual-time).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <mutex>
#include <vector>

namespace llmchaos {

// Milliseconds as a steady_clock duration, a negative count as zero: timeouts reach the I/O edges in ms.
inline std::chrono::steady_clock::duration ms_duration(double ms) {
  return std::chrono::duration_cast<std::chrono::steady_clock::duration>(
      std::chrono::duration<double, std::milli>(ms > 0 ? ms : 0));
}

class Clock {
 public:
  virtual ~Clock() = default;
  // Milliseconds since this clock's epoch (fractional; monotonic).
  virtual double now_ms() const = 0;
  // Block (real clock) or advance (virtual clock) for `ms`.
  virtual void sleep_ms(double ms) = 0;
  // Overlapping callers: body(i) on a thread of its own from starts_ms[i] on, for every i; returns when
  // all have returned (the first exception any threw is rethrown then). On a real clock they run at
  // once; a virtual clock runs them one at a time, each until it sleeps, in the order of the times
  // they wait for, so an overlapped run is as deterministic as a sequential one.
  virtual void run_overlapping(const std::vector<double>& starts_ms,
                               const std::function<void(std::size_t)>& body);
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

// Virtual clock: time moves only when told to. sleep_ms advances it; under run_overlapping, a thread's
// sleep hands the turn to the thread due soonest and time moves to when that one is due. Thread-safe.
class ManualClock final : public Clock {
 public:
  explicit ManualClock(double start_ms = 0) : now_(start_ms) {}
  double now_ms() const override;
  void sleep_ms(double ms) override;
  void advance(double ms);
  void set(double ms);
  void run_overlapping(const std::vector<double>& starts_ms,
                       const std::function<void(std::size_t)>& body) override;

 private:
  struct Turn {
    double due_ms = 0;
    std::uint64_t order = 0;  // ties at the same time: first come, first served
    bool done = false;
  };
  void pass_turn();  // under mutex_: the turn to the earliest due, time moved to its due
  void wait_turn(std::unique_lock<std::mutex>& lock, std::size_t me);

  mutable std::mutex mutex_;
  double now_;
  std::vector<Turn> turns_;  // run_overlapping's threads (empty otherwise)
  std::size_t running_ = 0;  // whose turn it is (== turns_.size(): nobody's)
  std::uint64_t next_order_ = 0;
  std::condition_variable turn_changed_;
};

}  // namespace llmchaos
