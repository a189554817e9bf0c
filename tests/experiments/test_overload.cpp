#include <catch2/catch.hpp>
#include <cmath>
#include <stdexcept>
#include <vector>

#include "llmchaos/core/rng.hpp"
#include "llmchaos/experiments/overload.hpp"

using namespace llmchaos;
using namespace llmchaos::experiments;

namespace {
OverloadSettings small_service() {
  OverloadSettings s;
  s.capacity_per_sec = 20;  // 20/s x 100 ms = 2 model slots
  s.service_ms = 100;
  s.workers = 4;
  return s;
}
}  // namespace

TEST_CASE("gates parse from name:value and print back the same way", "[experiments][overload]") {
  const auto u = parse_gate("unbounded:400");
  CHECK(u.kind == client::GateKind::unbounded);
  CHECK(u.wait_cap_ms == 400);
  CHECK(u.label() == "unbounded:400");
  CHECK(parse_gate("bounded:24").queue_limit == 24);
  CHECK(parse_gate("admission:100").kind == client::GateKind::wait_budget);
  CHECK(parse_gate("admission:2.5").label() == "admission:2.5");
  auto message = [](const char* text) {
    try {
      parse_gate(text);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(message("fifo:3") ==
        "gate \"fifo:3\": unknown gate \"fifo\" (expected unbounded:WAITCAP_MS, bounded:N or "
        "admission:BUDGET_MS)");
  CHECK(message("bounded") ==
        "gate \"bounded\": missing the value after ':' (expected unbounded:WAITCAP_MS, bounded:N or "
        "admission:BUDGET_MS)");
  CHECK(message("bounded:2.5").find("whole number") != std::string::npos);
  CHECK(message("admission:-1").find("not a number >= 0") != std::string::npos);
  CHECK(message("unbounded:12ms").find("\"12ms\" is not a number") != std::string::npos);
}

TEST_CASE("the model has capacity x service time slots", "[experiments][overload]") {
  OverloadSettings s;
  CHECK(s.model_slots() == 4);  // 80/s x 50 ms
  s.capacity_per_sec = 10;
  s.service_ms = 20;
  CHECK(s.model_slots() == 1);  // never zero
}

TEST_CASE("constant arrivals are evenly spaced, Poisson arrivals are seeded and average the rate",
          "[experiments][overload]") {
  Rng rng(1);
  const auto c = arrival_times(4, 1000, ArrivalProcess::constant, rng);
  CHECK(c == std::vector<double>{0, 250, 500, 750});
  Rng a(5), b(5);
  const auto p = arrival_times(100, 100000, ArrivalProcess::poisson, a);
  CHECK(p == arrival_times(100, 100000, ArrivalProcess::poisson, b));
  CHECK(p.size() > 9500);
  CHECK(p.size() < 10500);
  CHECK(std::is_sorted(p.begin(), p.end()));
  CHECK(p.back() < 100000);
}

TEST_CASE("an arrival that finds every worker busy is never accepted", "[experiments][overload]") {
  ServiceCore core(parse_gate("unbounded:1000"), small_service());
  CHECK(core.arrive(0, 0).start_now);
  CHECK(core.arrive(1, 0).start_now);
  const auto third = core.arrive(2, 0);  // both slots busy: queued, holding a worker
  CHECK(third.fate == Fate::pending);
  CHECK_FALSE(third.start_now);
  core.arrive(3, 0);
  CHECK(core.workers_busy() == 4);
  CHECK(core.arrive(4, 1).fate == Fate::never_accepted);
  std::vector<std::size_t> gave_up;
  CHECK(core.finish(100, gave_up) == std::vector<std::size_t>{2});  // the head starts on the free slot
  CHECK(gave_up.empty());
  CHECK(core.workers_busy() == 3);
}

TEST_CASE("the unbounded gate gives a waiting request up at its wait cap and frees its worker",
          "[experiments][overload]") {
  ServiceCore core(parse_gate("unbounded:50"), small_service());
  core.arrive(0, 0);
  core.arrive(1, 0);
  core.arrive(2, 10);
  core.arrive(3, 20);
  CHECK(core.next_expiry_ms() == 60);
  CHECK(core.expire(59).empty());
  CHECK(core.expire(60) == std::vector<std::size_t>{2});
  CHECK(core.next_expiry_ms() == 70);
  CHECK(core.workers_busy() == 3);
  CHECK(core.expire(1000) == std::vector<std::size_t>{3});
  CHECK(std::isinf(core.next_expiry_ms()));
}

TEST_CASE("the bounded gate degrades at once when its queue is full", "[experiments][overload]") {
  auto settings = small_service();
  settings.workers = 100;
  ServiceCore core(parse_gate("bounded:2"), settings);
  for (std::size_t i = 0; i < 4; ++i) CHECK(core.arrive(i, 0).fate == Fate::pending);  // 2 served + 2 queued
  CHECK(core.queued() == 2);
  CHECK(core.arrive(4, 0).fate == Fate::degraded);
  CHECK(core.workers_busy() == 4);  // a degraded answer holds no worker
  CHECK(std::isinf(core.next_expiry_ms()));
}

TEST_CASE("the admission gate admits only while the expected wait fits its budget",
          "[experiments][overload]") {
  auto settings = small_service();
  settings.workers = 100;
  // 2 slots of 100 ms: the first two waiting requests expect one round (100 ms), the next two rounds.
  ServiceCore core(parse_gate("admission:100"), settings);
  CHECK(core.arrive(0, 0).start_now);
  CHECK(core.arrive(1, 0).start_now);
  CHECK(core.arrive(2, 0).fate == Fate::pending);
  CHECK(core.arrive(3, 0).fate == Fate::pending);
  CHECK(core.arrive(4, 0).fate == Fate::degraded);
}

TEST_CASE("a virtual run is deterministic and every request ends with one fate", "[experiments][overload]") {
  OverloadSettings s;
  s.duration_ms = 3000;
  for (const char* g : {"unbounded:400", "bounded:24", "admission:100"}) {
    const auto a = simulate_overload(parse_gate(g), s, 2);
    const auto b = simulate_overload(parse_gate(g), s, 2);
    CHECK(a.served == b.served);
    CHECK(a.p95_ms == b.p95_ms);
    CHECK(a.offered == a.served + a.degraded + a.never_accepted + a.model_errors);
    CHECK(a.accepted == a.offered - a.never_accepted);
    CHECK(a.model_errors == 0);
  }
}

// The study's expected shape (SPEC 8), 80/s x 50 ms, 64 workers, Poisson arrivals, 20 s of virtual time.
TEST_CASE("coverage is set by capacity: about capacity/offered for every gate that keeps accepting",
          "[experiments][overload]") {
  OverloadSettings s;
  s.duration_ms = 20000;
  for (const double load : {2.0, 4.0}) {
    for (const char* g : {"bounded:24", "admission:100"}) {
      const auto r = simulate_overload(parse_gate(g), s, load);
      INFO(g << " at " << load << "x");
      CHECK_FALSE(r.biased);
      CHECK(r.coverage == Approx(s.capacity_per_sec / r.offered_per_sec).epsilon(0.05));
    }
  }
  // With workers to spare the unbounded gate keeps accepting too, and obeys the same rule.
  s.workers = 10000;
  const auto u = simulate_overload(parse_gate("unbounded:400"), s, 4);
  CHECK_FALSE(u.biased);
  CHECK(u.coverage == Approx(s.capacity_per_sec / u.offered_per_sec).epsilon(0.05));
}

TEST_CASE("the gate sets p95: admission about budget + service, bounded about N/capacity + service",
          "[experiments][overload]") {
  OverloadSettings s;
  s.duration_ms = 20000;
  for (const double load : {2.0, 4.0}) {
    const auto a = simulate_overload(parse_gate("admission:100"), s, load);
    CHECK(a.p95_ms == Approx(100 + 50).epsilon(0.1));
    const auto b = simulate_overload(parse_gate("bounded:24"), s, load);
    CHECK(b.p95_ms == Approx(24.0 / 80 * 1000 + 50).epsilon(0.1));
    const auto u = simulate_overload(parse_gate("unbounded:400"), s, load);
    CHECK(u.p95_ms == Approx(400 + 50).epsilon(0.1));
  }
  // At every load the admission gate's p95 stays within its budget + service time.
  const auto one = simulate_overload(parse_gate("admission:100"), s, 1);
  CHECK(one.p95_ms <= 150 * 1.05);
}

TEST_CASE("a gate that stops accepting is flagged: its coverage is biased upward",
          "[experiments][overload]") {
  OverloadSettings s;  // 64 workers: the unbounded queue at 4x needs ~130 (320/s x 400 ms)
  s.duration_ms = 20000;
  const auto u = simulate_overload(parse_gate("unbounded:400"), s, 4);
  CHECK(u.biased);
  CHECK(u.achieved_per_sec < 0.95 * u.offered_per_sec);
  CHECK(u.never_accepted > 0);
  CHECK(u.coverage > 1.5 * s.capacity_per_sec / u.offered_per_sec);  // looks far better than it is
}

TEST_CASE("summarizing counts each fate once and flags achieved under 95% of offered",
          "[experiments][overload]") {
  const std::vector<Fate> fates = {Fate::served, Fate::served, Fate::degraded, Fate::gave_up,
                                   Fate::never_accepted};
  const auto r = summarize_overload(parse_gate("unbounded:400"), 2, 1000, fates, {10, 30});
  CHECK(r.offered == 5);
  CHECK(r.accepted == 4);
  CHECK(r.served == 2);
  CHECK(r.degraded == 2);
  CHECK(r.gave_up == 1);
  CHECK(r.coverage == 0.5);
  CHECK(r.offered_per_sec == 5);
  CHECK(r.achieved_per_sec == 4);
  CHECK(r.biased);  // 4 < 0.95 x 5
  CHECK(r.p50_ms == 20);
  CHECK(r.p95_ms == Approx(29));  // h = 0.95
}
