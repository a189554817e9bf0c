// The read-after-answer backoff (net/read_backoff.hpp), step by step against the plain rule it replaces:
// try every time.
#include <catch2/catch.hpp>
#include <vector>

#include "llmchaos/net/read_backoff.hpp"

using llmchaos::ReadBackoff;

namespace {
// How many of `requests` requests try the read when every try misses (a client one at a time).
int tries_when_always_missing(ReadBackoff& b, int requests) {
  int tries = 0;
  for (int i = 0; i < requests; ++i)
    if (b.try_now()) {
      ++tries;
      b.missed();
    }
  return tries;
}
}  // namespace

TEST_CASE("the first request tries; a miss skips the next 15, then 31, 63 ... up to 1023") {
  ReadBackoff b;
  std::vector<int> tried_at;
  for (int i = 0; i < 5000; ++i)
    if (b.try_now()) {
      tried_at.push_back(i);
      b.missed();
    }
  REQUIRE(tried_at.size() >= 8);
  CHECK(tried_at[0] == 0);
  CHECK(tried_at[1] == 16);       // 15 skipped
  CHECK(tried_at[2] == 16 + 32);  // 31 skipped
  CHECK(tried_at[3] == 48 + 64);  // 63 skipped
  for (std::size_t i = 1; i < tried_at.size(); ++i)
    CHECK(tried_at[i] - tried_at[i - 1] <= ReadBackoff::max_span + 1);
  CHECK(tried_at.back() - tried_at[tried_at.size() - 2] == ReadBackoff::max_span + 1);  // the cap holds
}

TEST_CASE("a client one at a time pays for a try about once in a thousand requests, not once in sixteen") {
  ReadBackoff b;
  const int tries = tries_when_always_missing(b, 100'000);
  CHECK(tries < 100'000 / 1000 + 10);
  CHECK(tries > 100'000 / 1024 - 10);
}

TEST_CASE("a client whose next request is there tries on every request") {
  ReadBackoff b;
  for (int i = 0; i < 1000; ++i) {
    REQUIRE(b.try_now());
    b.found();
  }
}

TEST_CASE("a hit brings the span back to its start") {
  ReadBackoff b;
  tries_when_always_missing(b, 10'000);  // the span is at its cap
  while (!b.try_now()) {
  }
  b.found();
  REQUIRE(b.try_now());  // nothing skipped after a hit
  b.missed();            // and the next miss skips only the first span again
  int skipped = 0;
  while (!b.try_now()) ++skipped;
  CHECK(skipped == ReadBackoff::first_span);
}
