// Backoff: exponential, full jitter from the injected Rng, capped; retry-after wins when longer.
#include <catch2/catch.hpp>

#include "llmchaos/client/backoff.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

TEST_CASE("the ceiling doubles from base and stops at the cap", "[backoff]") {
  Backoff b({200, 4000});
  CHECK(b.ceiling_ms(0) == 200);
  CHECK(b.ceiling_ms(1) == 400);
  CHECK(b.ceiling_ms(4) == 3200);
  CHECK(b.ceiling_ms(5) == 4000);
  CHECK(b.ceiling_ms(5000) == 4000);  // no overflow
}

TEST_CASE("full jitter draws between 0 and the ceiling and the same seed repeats the delays", "[backoff]") {
  Backoff b({200, 4000});
  Rng a(7), same(7);
  double lowest = 1e9, highest = 0;
  for (int i = 0; i < 2000; ++i) {
    const int n = i % 8;
    auto d = b.delay(n, a);
    REQUIRE(d.ms >= 0);
    REQUIRE(d.ms < b.ceiling_ms(n));
    REQUIRE(d.ms == same.uniform() * b.ceiling_ms(n));
    REQUIRE_FALSE(d.retry_after_won);
    if (n == 7) {
      lowest = std::min(lowest, d.ms);
      highest = std::max(highest, d.ms);
    }
  }
  // Full jitter spreads over the whole range, not just its top.
  CHECK(lowest < 400);
  CHECK(highest > 3600);
}

TEST_CASE("retry-after wins when it is longer than the draw, and is not capped", "[backoff]") {
  Backoff b({200, 4000});
  Rng rng(1);
  auto long_hint = b.delay(0, rng, 60000.0);
  CHECK(long_hint.ms == 60000);
  CHECK(long_hint.retry_after_won);
  CHECK(long_hint.jitter_ms < 200);
  auto short_hint = b.delay(6, rng, 0.0);
  CHECK(short_hint.ms == short_hint.jitter_ms);
  CHECK_FALSE(short_hint.retry_after_won);
}
