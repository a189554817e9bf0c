// Circuit breaker per route, on a manual clock.
#include <catch2/catch.hpp>

#include "llmchaos/client/breaker.hpp"
#include "llmchaos/core/clock.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

namespace {
BreakerSettings settings(int failures = 3, int successes = 2, double open_ms = 30000, int probes = 1) {
  BreakerSettings s;
  s.failure_threshold = failures;
  s.success_threshold = successes;
  s.open_ms = open_ms;
  s.half_open_max_probes = probes;
  return s;
}
}  // namespace

TEST_CASE("consecutive route failures at the threshold open the breaker, a success resets the count",
          "[breaker]") {
  ManualClock clock;
  CircuitBreaker b(settings(3));
  for (int i = 0; i < 2; ++i) {
    REQUIRE(b.allow_request(clock.now_ms()));
    b.on_failure(Owner::transient, clock.now_ms());
  }
  b.on_success(clock.now_ms());
  CHECK(b.consecutive_failures() == 0);
  for (int i = 0; i < 3; ++i) b.on_failure(Owner::rate, clock.now_ms());
  CHECK(b.state(clock.now_ms()) == BreakerState::open);
  CHECK(b.times_opened() == 1);
  CHECK_FALSE(b.allow_request(clock.now_ms()));
}

TEST_CASE("request, auth, policy and contract errors never count against the route", "[breaker]") {
  ManualClock clock;
  CircuitBreaker b(settings(1));
  for (auto owner : {Owner::request, Owner::auth, Owner::policy, Owner::contract, Owner::none})
    b.on_failure(owner, clock.now_ms());
  CHECK(b.state(clock.now_ms()) == BreakerState::closed);
  CHECK(b.consecutive_failures() == 0);
  for (auto owner : {Owner::transient, Owner::rate, Owner::quota, Owner::unknown}) {
    CircuitBreaker counted(settings(1));
    counted.on_failure(owner, 0);
    CHECK(counted.state(0) == BreakerState::open);
  }
}

TEST_CASE("open for open_ms, then half-open with probes counted and limited", "[breaker]") {
  ManualClock clock;
  CircuitBreaker b(settings(1, 2, 30000, 1));
  b.on_failure(Owner::transient, clock.now_ms());
  clock.advance(29999);
  CHECK(b.state(clock.now_ms()) == BreakerState::open);
  CHECK_FALSE(b.would_allow(clock.now_ms()));
  CHECK_FALSE(b.allow_request(clock.now_ms()));
  clock.advance(1);
  CHECK(b.state(clock.now_ms()) == BreakerState::half_open);
  CHECK(b.would_allow(clock.now_ms()));
  CHECK(b.allow_request(clock.now_ms()));        // the probe
  CHECK_FALSE(b.allow_request(clock.now_ms()));  // only one in flight
  CHECK_FALSE(b.would_allow(clock.now_ms()));
  CHECK(b.probes_in_flight() == 1);
  b.on_success(clock.now_ms());
  CHECK(b.state(clock.now_ms()) == BreakerState::half_open);  // 1 of 2 successes
  CHECK(b.allow_request(clock.now_ms()));
  b.on_success(clock.now_ms());
  CHECK(b.state(clock.now_ms()) == BreakerState::closed);
  CHECK(b.probes_started() == 2);
}

TEST_CASE("a failed probe opens the breaker again for a full open_ms", "[breaker]") {
  ManualClock clock;
  CircuitBreaker b(settings(1, 1, 1000, 2));
  b.on_failure(Owner::transient, clock.now_ms());
  clock.advance(1000);
  REQUIRE(b.allow_request(clock.now_ms()));
  REQUIRE(b.allow_request(clock.now_ms()));  // two probes allowed
  CHECK_FALSE(b.allow_request(clock.now_ms()));
  clock.advance(10);
  b.on_failure(Owner::unknown, clock.now_ms());
  CHECK(b.state(clock.now_ms()) == BreakerState::open);
  CHECK(b.times_opened() == 2);
  CHECK(b.opened_at_ms() == 1010);
  clock.advance(999);
  CHECK_FALSE(b.allow_request(clock.now_ms()));
  clock.advance(1);
  CHECK(b.allow_request(clock.now_ms()));
  CHECK(b.probes_started() == 3);
}

TEST_CASE("a probe that ends in a request error frees its slot without deciding", "[breaker]") {
  ManualClock clock;
  CircuitBreaker b(settings(1, 1, 100, 1));
  b.on_failure(Owner::transient, 0);
  clock.advance(100);
  REQUIRE(b.allow_request(clock.now_ms()));
  b.on_failure(Owner::request, clock.now_ms());
  CHECK(b.state(clock.now_ms()) == BreakerState::half_open);
  CHECK(b.probes_in_flight() == 0);
  CHECK(b.allow_request(clock.now_ms()));
}

TEST_CASE("during a 60 s outage a sequential caller sends one probe per open period", "[breaker]") {
  // The invariant the harness checks ("breaker probes limited"), on simulated time.
  ManualClock clock;
  CircuitBreaker b(settings(3, 2, 5000, 1));
  int sent = 0;
  for (int i = 0; i < 600 && clock.now_ms() < 60000; ++i) {  // one request every 100 ms
    if (b.allow_request(clock.now_ms())) {
      ++sent;
      b.on_failure(Owner::transient, clock.now_ms());
    }
    clock.advance(100);
  }
  // 3 to open, then one probe per 5 s of the remaining ~60 s.
  CHECK(sent <= 3 + 12);
  CHECK(b.probes_started() == sent - 3);
  CHECK(b.state(clock.now_ms()) != BreakerState::closed);
}

TEST_CASE("make_breakers gives every policy route its own settings", "[breaker]") {
  Policy p;
  RoutePolicy a;
  a.name = "a";
  a.breaker = settings(7);
  p.routes["a"] = a;
  p.routes["b"] = RoutePolicy{};
  auto breakers = make_breakers(p);
  CHECK(breakers.size() == 2);
  CHECK(breakers.at("a").settings().failure_threshold == 7);
  CHECK(breakers.at("b").settings().failure_threshold == BreakerSettings{}.failure_threshold);
}

TEST_CASE("breaker states have names", "[breaker]") {
  CHECK(to_string(BreakerState::half_open) == "half_open");
  CHECK(parse_enum<BreakerState>("open") == BreakerState::open);
}
