// Route cooldowns across requests (cooldown.hpp): times passed in, no clock.
#include <catch2/catch.hpp>

#include "llmchaos/client/cooldown.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

namespace {
const CooldownSettings quota_60s{60'000, false};
const CooldownCause quota{Owner::quota, std::nullopt};
CooldownCause rate(double hint) {
  return {Owner::rate, hint};
}
}  // namespace

TEST_CASE("cooldown: a quota failure keeps the route out for its quota window", "[cooldown]") {
  RouteCooldowns cd;
  cd.on_failure("primary", quota, quota_60s, 1000);
  CHECK(cd.remaining_ms("primary", 1000) == 60'000);
  CHECK(cd.remaining_ms("primary", 60'999) == 1);
  CHECK(cd.remaining_ms("primary", 61'000) == 0);
  CHECK(cd.remaining_ms("backup", 1000) == 0);
  CHECK(cd.cooled_by("primary") == Owner::quota);
}

TEST_CASE("cooldown: only the provider's word cools; no window, no cooldown", "[cooldown]") {
  RouteCooldowns cd;
  const CooldownSettings both{60'000, true};
  for (Owner o : {Owner::transient, Owner::unknown, Owner::request, Owner::contract})
    cd.on_failure("primary", {o, 5000.0}, both, 0);  // a caller's own timeout is transient
  CHECK(cd.remaining_ms("primary", 0) == 0);
  cd.on_failure("primary", quota, {0, true}, 0);
  CHECK(cd.remaining_ms("primary", 0) == 0);
  cd.on_failure("primary", {Owner::rate, std::nullopt}, both, 0);  // a rate 429 without a hint
  CHECK(cd.remaining_ms("primary", 0) == 0);
}

TEST_CASE("cooldown: a rate 429's Retry-After outlives its request only when the route keeps it",
          "[cooldown]") {
  RouteCooldowns cd;
  cd.on_failure("primary", rate(3000), quota_60s, 0);
  CHECK(cd.remaining_ms("primary", 0) == 0);
  cd.on_failure("primary", rate(3000), {0, true}, 0);
  CHECK(cd.remaining_ms("primary", 1000) == 2000);
  CHECK(cd.cooled_by("primary") == Owner::rate);
}

TEST_CASE("cooldown: a later failure extends a cooldown, a shorter one never shortens it", "[cooldown]") {
  const CooldownSettings keep_rate{1000, true};
  CHECK(cooldown_end_after(5000, quota, keep_rate, 0) == 5000);
  CHECK(cooldown_end_after(5000, quota, keep_rate, 4500) == 5500);
  CHECK(cooldown_end_after(5000, rate(300), keep_rate, 4500) == 5000);
  CHECK(cooldown_end_after(5000, rate(3000), keep_rate, 4500) == 7500);
  CHECK(cooldown_end_after(5000, {Owner::transient, 9000.0}, keep_rate, 4500) == 5000);
  RouteCooldowns cd;
  cd.on_failure("primary", rate(10'000), keep_rate, 0);
  cd.on_failure("primary", rate(2'000), keep_rate, 1000);
  CHECK(cd.remaining_ms("primary", 1000) == 9000);
  CHECK(cd.cooled_by("primary") == Owner::rate);
}

TEST_CASE("cooldown: every route cooling -> the wait until the soonest is free", "[cooldown]") {
  RouteCooldowns cd;
  cd.on_failure("primary", quota, quota_60s, 0);
  CHECK_FALSE(cd.all_cooling_for({"primary", "backup"}, 1000));  // backup is free
  cd.on_failure("backup", quota, {30'000, false}, 500);
  REQUIRE(cd.all_cooling_for({"primary", "backup"}, 1000));
  CHECK(*cd.all_cooling_for({"primary", "backup"}, 1000) == 29'500);
  CHECK_FALSE(cd.all_cooling_for({"primary", "backup"}, 30'500));
}
