// Balancer: least-connections with a latency EMA, near-ties shared by weight; failures exclude, and decay
// brings back.
#include <catch2/catch.hpp>
#include <limits>
#include <map>
#include <vector>

#include "llmchaos/client/balancer.hpp"
#include "llmchaos/core/clock.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

TEST_CASE("least connections: the busy endpoint is avoided", "[balancer]") {
  Rng rng(1);
  Balancer b({{"a"}, {"b"}});
  b.on_start(0);
  b.on_start(0);
  CHECK(b.pick(0, rng).name == "b");
  b.on_start(1);
  b.on_start(1);
  b.on_start(1);
  CHECK(b.pick(0, rng).name == "a");
}

TEST_CASE("the latency EMA steers load to the faster endpoint", "[balancer]") {
  ManualClock clock;
  Rng rng(2);
  Balancer b({{"slow"}, {"fast"}}, {.ema_alpha = 0.5});
  b.on_start(0);
  b.on_finish(0, true, 400, clock.now_ms());
  b.on_start(1);
  b.on_finish(1, true, 100, clock.now_ms());
  CHECK(b.latency_ema_ms(0) == 400);  // the first sample seeds the EMA
  CHECK(b.pick(clock.now_ms(), rng).name == "fast");
  b.on_finish(1, true, 300, clock.now_ms());
  CHECK(b.latency_ema_ms(1) == 200);  // 0.5 * 300 + 0.5 * 100
  // At equal latency, three requests in flight on "fast" outweigh its speed.
  for (int i = 0; i < 3; ++i) b.on_start(1);
  CHECK(b.pick(clock.now_ms(), rng).name == "slow");
}

namespace {
// One request on the endpoint the balancer picks, one at a time (in_flight 0 at every pick), at `ms`.
std::string serve(Balancer& b, Rng& rng, double latency_ms = 100, double now_ms = 0) {
  const auto p = b.pick(now_ms, rng);
  b.on_start(p.index);
  b.on_finish(p.index, true, latency_ms, now_ms);
  return std::string(p.name);
}
}  // namespace

TEST_CASE("weights share the load in proportion when sequential requests tie", "[balancer]") {
  Rng rng(3);
  Balancer b({{"small", 1}, {"big", 3}});
  // Equal latency, requests one at a time: big takes exactly three of every four (the turns).
  std::map<std::string, int> picks;
  for (int i = 0; i < 4000; ++i) ++picks[serve(b, rng)];
  CHECK(picks["big"] == 3000);
  CHECK(picks["small"] == 1000);
  CHECK(b.score(1) < b.score(0));
}

TEST_CASE(
    "a member clearly slower than the near-ties gets a rare turn whatever its weight, and its full share "
    "back once fast",
    "[balancer]") {
  ManualClock clock;
  Rng rng(7);
  Balancer b({{"heavy", 10}, {"light", 1}});
  b.on_start(0);
  b.on_finish(0, true, 200, clock.now_ms());  // 2 x the lowest: past share_within (1.25)
  b.on_start(1);
  b.on_finish(1, true, 100, clock.now_ms());
  // Heavy stays at 200: its turns come at the lightest near-tie's rate (1, not its own 10) times
  // (125 / 200)^4 = 0.153, so it takes about 0.153 / 1.153 = 13% of the picks, and never goes unmeasured
  // for long (no starvation by one slow sample).
  std::map<std::string, int> picks;
  int longest_gap = 0, gap = 0;
  for (int i = 0; i < 1000; ++i) {
    const auto p = b.pick(clock.now_ms(), rng);
    b.on_start(p.index);
    b.on_finish(p.index, true, p.index == 0 ? 200 : 100, clock.now_ms());
    ++picks[std::string(p.name)];
    gap = p.index == 0 ? 0 : gap + 1;
    longest_gap = std::max(longest_gap, gap);
  }
  CHECK(picks["heavy"] >= 110);
  CHECK(picks["heavy"] <= 160);
  CHECK(longest_gap <= 10);
  // Fast again (a sample of 70: EMA 0.3 x 70 + 0.7 x 200 = 161, then more), heavy is a near-tie and takes
  // ten in eleven, with no burst for the turns it missed.
  for (int i = 0; i < 5; ++i) b.on_finish(0, true, 100, clock.now_ms());
  REQUIRE(b.latency_ema_ms(0) <= 125);
  picks.clear();
  for (int i = 0; i < 110; ++i) ++picks[serve(b, rng, 100)];
  CHECK(picks["heavy"] >= 99);
  CHECK(picks["heavy"] <= 101);
}

TEST_CASE("next_turn picks the earliest candidate turn, ties drawn evenly", "[balancer]") {
  Rng rng(8);
  constexpr double none = std::numeric_limits<double>::infinity();
  const std::vector<double> turns = {none, 2, 1, 3};
  CHECK(next_turn(turns, rng) == 2);
  const std::vector<double> tied = {1, none, 1};
  std::map<std::size_t, int> picks;
  for (int i = 0; i < 2000; ++i) ++picks[next_turn(tied, rng)];
  CHECK(picks.size() == 2);
  CHECK(picks[0] > 900);
  CHECK(picks[2] > 900);
  const std::vector<double> empty = {none, none};
  CHECK_THROWS(next_turn(empty, rng));
}

TEST_CASE("equal endpoints share the load through the seeded tie-break", "[balancer]") {
  Rng rng(4);
  Balancer b({{"a"}, {"b"}, {"c"}});
  std::map<std::string, int> picks;
  for (int i = 0; i < 300; ++i) ++picks[std::string(b.pick(0, rng).name)];
  CHECK(picks.size() == 3);
  for (const auto& [name, n] : picks) CHECK(n > 50);
}

TEST_CASE("an endpoint excluded for failures comes back as the failures decay", "[balancer]") {
  ManualClock clock;
  Rng rng(5);
  BalancerSettings s;
  s.failure_half_life_ms = 10000;
  s.exclude_at_failures = 3;
  Balancer b({{"flaky"}, {"steady", 0.01}}, s);  // "steady" is a poor choice unless flaky is out
  for (int i = 0; i < 4; ++i) {
    b.on_start(0);
    b.on_finish(0, false, 0, clock.now_ms());
  }
  CHECK(b.excluded(0, clock.now_ms()));
  CHECK(b.pick(clock.now_ms(), rng).name == "steady");
  // Score 4 decays below 3 after log2(4/3) half-lives (~4150 ms).
  clock.advance(4000);
  CHECK(b.excluded(0, clock.now_ms()));
  clock.advance(200);
  CHECK_FALSE(b.excluded(0, clock.now_ms()));
  // Back in rotation: flaky takes its turns again (steady, of weight 0.01, one in a hundred and one).
  int flaky = 0;
  for (int i = 0; i < 101; ++i) flaky += serve(b, rng, 100, clock.now_ms()) == "flaky";
  CHECK(flaky == 100);
}

TEST_CASE("never excluded forever: however many failures, the decay ends the exclusion", "[balancer]") {
  ManualClock clock;
  Balancer b({{"a"}}, {.failure_half_life_ms = 1000, .exclude_at_failures = 3});
  for (int i = 0; i < 1000; ++i) b.on_finish(0, false, 0, clock.now_ms());
  CHECK(b.excluded(0, clock.now_ms()));
  int steps = 0;
  while (b.excluded(0, clock.now_ms()) && steps < 100) {
    clock.advance(1000);
    ++steps;
  }
  CHECK_FALSE(b.excluded(0, clock.now_ms()));
  CHECK(steps == 9);  // 1000 / 2^9 < 3 <= 1000 / 2^8
}

TEST_CASE("all excluded: panic mode picks the least-failed endpoint", "[balancer]") {
  ManualClock clock;
  Rng rng(6);
  Balancer b({{"a"}, {"b"}});
  for (int i = 0; i < 5; ++i) b.on_finish(0, false, 0, clock.now_ms());
  for (int i = 0; i < 3; ++i) b.on_finish(1, false, 0, clock.now_ms());
  auto p = b.pick(clock.now_ms(), rng);
  CHECK(p.panic);
  CHECK(p.name == "b");
}
