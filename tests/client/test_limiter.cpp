// Rate limiter: sliding windows per minute and per day, token bucket per minute, shared per key.
#include <catch2/catch.hpp>
#include <limits>

#include "llmchaos/client/limiter.hpp"
#include "llmchaos/core/clock.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

TEST_CASE("sliding window: the wait is until the oldest event leaves the window", "[limiter]") {
  ManualClock clock;
  SlidingWindow w(60000, 3);
  for (int i = 0; i < 3; ++i) {
    REQUIRE(w.wait_ms(clock.now_ms()) == 0);
    w.record(clock.now_ms());
    clock.advance(1000);
  }
  // Events at 0, 1000, 2000; now 3000: the one at 0 leaves at 60000.
  CHECK(w.wait_ms(clock.now_ms()) == 57000);
  clock.set(60000);
  CHECK(w.wait_ms(clock.now_ms()) == 0);
  CHECK(w.count(clock.now_ms()) == 2);
}

TEST_CASE("sliding window is exact at the edge, unlike a fixed window", "[limiter]") {
  SlidingWindow w(60000, 2);
  w.record(59000);
  w.record(59500);
  // A fixed minute window would reset at 60000; the sliding one still counts both.
  CHECK(w.wait_ms(60500) == 58500);
}

TEST_CASE("token bucket: starts full, refills continuously, waits for the missing tokens", "[limiter]") {
  TokenBucket b(6000, 60000, 0);  // 6000 tokens per minute = 0.1 per ms
  CHECK(b.available(0) == 6000);
  CHECK(b.wait_ms(6000, 0) == 0);
  b.take(5000, 0);
  CHECK(b.wait_ms(2000, 0) == Approx(10000));
  CHECK(b.available(10000) == Approx(2000));
  CHECK(b.available(1e9) == 6000);  // never above capacity
  CHECK(b.wait_ms(6001, 0) == std::numeric_limits<double>::infinity());
}

TEST_CASE("a request refused by one limit is counted by none", "[limiter]") {
  RateLimits limits;
  limits.requests_per_minute = 10;
  limits.tokens_per_minute = 1000;
  KeyLimiter k(limits, 0);
  auto big = k.try_acquire(0, 900);
  REQUIRE(big.allowed);
  auto refused = k.try_acquire(0, 500);
  CHECK_FALSE(refused.allowed);
  CHECK(refused.limit == "tokens_per_minute");
  CHECK(refused.wait_ms == Approx(400 * 60.0));  // 400 missing tokens at 1000/min
  // The refused request did not use a request slot: 9 more fit.
  for (int i = 0; i < 9; ++i) REQUIRE(k.try_acquire(0, 0).allowed);
  auto rpm = k.try_acquire(0, 0);
  CHECK_FALSE(rpm.allowed);
  CHECK(rpm.limit == "requests_per_minute");
  CHECK(rpm.wait_ms == 60000);
}

TEST_CASE("the binding limit is the longest wait: per day beats per minute", "[limiter]") {
  ManualClock clock;
  RateLimits limits;
  limits.requests_per_minute = 2;
  limits.requests_per_day = 3;
  KeyLimiter k(limits, clock.now_ms());
  for (int i = 0; i < 3; ++i) {
    REQUIRE(k.try_acquire(clock.now_ms()).allowed);
    clock.advance(30000);
  }
  auto v = k.try_acquire(clock.now_ms());
  CHECK_FALSE(v.allowed);
  CHECK(v.limit == "requests_per_day");
  CHECK(v.wait_ms == Approx(24 * 3600 * 1000.0 - 90000));
}

TEST_CASE("settling actual tokens above the estimate leaves a debt the refill repays", "[limiter]") {
  RateLimits limits;
  limits.tokens_per_minute = 600;  // 0.01 per ms
  KeyLimiter k(limits, 0);
  REQUIRE(k.try_acquire(0, 100).allowed);
  k.settle(100, 700, 0);  // the answer used 600 more than estimated: level -100
  auto v = k.try_acquire(0, 50);
  CHECK_FALSE(v.allowed);
  CHECK(v.wait_ms == Approx(15000));  // 150 tokens at 0.01/ms
}

TEST_CASE("the registry keeps one state per key across requests and keys do not share", "[limiter]") {
  ManualClock clock;
  RateLimits one_per_minute;
  one_per_minute.requests_per_minute = 1;
  RateLimiter limiter(one_per_minute);
  CHECK(limiter.try_acquire("alice", clock.now_ms()).allowed);
  CHECK_FALSE(limiter.try_acquire("alice", clock.now_ms()).allowed);  // the same state, not rebuilt
  CHECK(limiter.try_acquire("bob", clock.now_ms()).allowed);
  CHECK(limiter.keys() == 2);
  RateLimits gold;
  gold.requests_per_minute = 100;
  limiter.configure("carol", gold, clock.now_ms());
  for (int i = 0; i < 100; ++i) REQUIRE(limiter.try_acquire("carol", clock.now_ms()).allowed);
  CHECK_FALSE(limiter.try_acquire("carol", clock.now_ms()).allowed);
  clock.advance(60000);
  CHECK(limiter.try_acquire("alice", clock.now_ms()).allowed);
}

TEST_CASE("no limits configured means no waiting", "[limiter]") {
  RateLimiter limiter;
  for (int i = 0; i < 1000; ++i) REQUIRE(limiter.try_acquire("k", 0, 1e6).allowed);
}
