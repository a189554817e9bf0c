#include "llmchaos/core/clock.hpp"

#include <algorithm>
#include <exception>
#include <stdexcept>
#include <thread>

namespace llmchaos {

double SteadyClock::now_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
}

void SteadyClock::sleep_ms(double ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
}

namespace {
// The overlapping thread this is, as ManualClock::run_overlapping numbered it (none: nullptr).
struct Participant {
  const void* clock = nullptr;
  std::size_t index = 0;
};
thread_local Participant participant;

// Runs every body on a thread; the first exception is rethrown once all are joined.
void run_threads(std::size_t n, const std::function<void(std::size_t)>& one) {
  std::vector<std::exception_ptr> errors(n);
  std::vector<std::thread> threads;
  threads.reserve(n);
  for (std::size_t i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      try {
        one(i);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}
}  // namespace

void Clock::run_overlapping(const std::vector<double>& starts_ms,
                            const std::function<void(std::size_t)>& body) {
  const double t0 = now_ms();
  run_threads(starts_ms.size(), [&](std::size_t i) {
    sleep_ms(starts_ms[i] - (now_ms() - t0));
    body(i);
  });
}

double ManualClock::now_ms() const {
  std::lock_guard lock(mutex_);
  return now_;
}

void ManualClock::advance(double ms) {
  std::lock_guard lock(mutex_);
  if (ms > 0) now_ += ms;
}

void ManualClock::set(double ms) {
  std::lock_guard lock(mutex_);
  now_ = ms;
}

void ManualClock::sleep_ms(double ms) {
  if (participant.clock != this) return advance(ms);
  std::unique_lock lock(mutex_);
  auto& me = turns_[participant.index];
  me.due_ms = now_ + std::max(ms, 0.0);
  me.order = next_order_++;
  pass_turn();
  wait_turn(lock, participant.index);
}

void ManualClock::pass_turn() {
  running_ = turns_.size();
  for (std::size_t i = 0; i < turns_.size(); ++i) {
    const auto& t = turns_[i];
    if (t.done) continue;
    if (running_ == turns_.size() || t.due_ms < turns_[running_].due_ms ||
        (t.due_ms == turns_[running_].due_ms && t.order < turns_[running_].order))
      running_ = i;
  }
  if (running_ < turns_.size() && turns_[running_].due_ms > now_) now_ = turns_[running_].due_ms;
  turn_changed_.notify_all();
}

void ManualClock::wait_turn(std::unique_lock<std::mutex>& lock, std::size_t me) {
  turn_changed_.wait(lock, [&] { return running_ == me; });
}

void ManualClock::run_overlapping(const std::vector<double>& starts_ms,
                                  const std::function<void(std::size_t)>& body) {
  {
    std::lock_guard lock(mutex_);
    if (!turns_.empty()) throw std::logic_error("ManualClock: run_overlapping inside run_overlapping");
    const double t0 = now_;
    for (const double start : starts_ms)
      turns_.push_back(Turn{t0 + std::max(start, 0.0), next_order_++, false});
    pass_turn();
  }
  try {
    run_threads(starts_ms.size(), [&](std::size_t i) {
      participant = {this, i};
      struct Done {  // the turn goes on even when the body throws
        ManualClock& clock;
        std::size_t i;
        ~Done() {
          std::lock_guard lock(clock.mutex_);
          clock.turns_[i].done = true;
          clock.pass_turn();
          participant = {};
        }
      } done{*this, i};
      {
        std::unique_lock lock(mutex_);
        wait_turn(lock, i);
      }
      body(i);
    });
  } catch (...) {
    std::lock_guard lock(mutex_);
    turns_.clear();
    throw;
  }
  std::lock_guard lock(mutex_);
  turns_.clear();
}

}  // namespace llmchaos
