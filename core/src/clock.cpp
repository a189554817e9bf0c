#include "llmchaos/core/clock.hpp"

#include <thread>

namespace llmchaos {

double SteadyClock::now_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_).count();
}

void SteadyClock::sleep_ms(double ms) {
  if (ms > 0) std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(ms));
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

}  // namespace llmchaos
