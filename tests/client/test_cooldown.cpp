// Route cooldowns across requests (cooldown.hpp): times passed in, no clock.
#include <catch2/catch.hpp>

#include "llmchaos/client/cooldown.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

TEST_CASE("cooldown: a quota failure keeps the route out for its quota window", "[cooldown]") {
  RouteCooldowns cd;
  cd.on_failure("primary", Owner::quota, 60'000, 1000);
  CHECK(cd.remaining_ms("primary", 1000) == 60'000);
  CHECK(cd.remaining_ms("primary", 60'999) == 1);
  CHECK(cd.remaining_ms("primary", 61'000) == 0);
  CHECK(cd.remaining_ms("backup", 1000) == 0);
}

TEST_CASE("cooldown: only the provider's quota word cools; no window, no cooldown", "[cooldown]") {
  RouteCooldowns cd;
  for (Owner o : {Owner::transient, Owner::rate, Owner::unknown, Owner::request, Owner::contract})
    cd.on_failure("primary", o, 60'000, 0);  // a caller's own timeout is transient
  CHECK(cd.remaining_ms("primary", 0) == 0);
  cd.on_failure("primary", Owner::quota, 0, 0);
  CHECK(cd.remaining_ms("primary", 0) == 0);
}

TEST_CASE("cooldown: a later failure extends a cooldown, a shorter window never shortens it", "[cooldown]") {
  CHECK(cooldown_end_after(5000, Owner::quota, 1000, 0) == 5000);
  CHECK(cooldown_end_after(5000, Owner::quota, 1000, 4500) == 5500);
  CHECK(cooldown_end_after(5000, Owner::transient, 1000, 4500) == 5000);
  RouteCooldowns cd;
  cd.on_failure("primary", Owner::quota, 10'000, 0);
  cd.on_failure("primary", Owner::quota, 2'000, 1000);
  CHECK(cd.remaining_ms("primary", 1000) == 9000);
}

TEST_CASE("cooldown: every route cooling -> the wait until the soonest is free", "[cooldown]") {
  RouteCooldowns cd;
  cd.on_failure("primary", Owner::quota, 60'000, 0);
  CHECK_FALSE(cd.all_cooling_for({"primary", "backup"}, 1000));  // backup is free
  cd.on_failure("backup", Owner::quota, 30'000, 500);
  REQUIRE(cd.all_cooling_for({"primary", "backup"}, 1000));
  CHECK(*cd.all_cooling_for({"primary", "backup"}, 1000) == 29'500);
  CHECK_FALSE(cd.all_cooling_for({"primary", "backup"}, 30'500));
}
