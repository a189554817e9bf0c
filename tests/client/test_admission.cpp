// Admission gate (SPEC 8): unbounded with a wait cap, bounded queue, admission by wait budget.
#include <catch2/catch.hpp>

#include "llmchaos/client/admission.hpp"
#include "llmchaos/core/clock.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

namespace {
AdmissionSettings gate(GateKind kind, int workers = 4) {
  AdmissionSettings s;
  s.kind = kind;
  s.workers = workers;
  s.wait_cap_ms = 400;
  s.max_queue = 24;
  s.wait_budget_ms = 100;
  return s;
}
}  // namespace

TEST_CASE("expected wait counts whole service rounds of the busy workers", "[admission]") {
  // 4 workers, 50 ms each.
  CHECK(AdmissionGate::expected_wait_ms(0, 3, 4, 50) == 0);   // a worker is free
  CHECK(AdmissionGate::expected_wait_ms(0, 4, 4, 50) == 50);  // all busy: one round
  CHECK(AdmissionGate::expected_wait_ms(3, 4, 4, 50) == 50);  // 3 ahead share the first round
  CHECK(AdmissionGate::expected_wait_ms(4, 4, 4, 50) == 100);
  CHECK(AdmissionGate::expected_wait_ms(2, 2, 4, 50) == 50);  // 2 free take the 2 waiting
}

TEST_CASE("unbounded: admits everything, gives up on a request that waited past the cap", "[admission]") {
  ManualClock clock(1000);
  AdmissionGate g(gate(GateKind::unbounded));
  auto d = g.decide(10000, 4, 50, clock.now_ms());
  CHECK(d.verdict == AdmissionVerdict::admit);
  CHECK(d.give_up_at_ms == 1400);
  CHECK(d.expected_wait_ms == (10000 / 4 + 1) * 50.0);
  clock.advance(400);
  CHECK(g.on_dequeue(1000, clock.now_ms()).verdict == AdmissionVerdict::admit);
  clock.advance(1);
  auto late = g.on_dequeue(1000, clock.now_ms());
  CHECK(late.verdict == AdmissionVerdict::reject_degrade);
  CHECK(late.reason == "waited longer than the wait cap");
}

TEST_CASE("bounded: degrades at once when max_queue requests already wait", "[admission]") {
  AdmissionGate g(gate(GateKind::bounded));
  CHECK(g.decide(23, 4, 50, 0).verdict == AdmissionVerdict::admit);
  auto full = g.decide(24, 4, 50, 0);
  CHECK(full.verdict == AdmissionVerdict::reject_degrade);
  CHECK(full.reason == "bounded queue is full");
  // The bounded gate has no wait cap once admitted.
  CHECK(g.on_dequeue(0, 1e6).verdict == AdmissionVerdict::admit);
}

TEST_CASE("wait budget: degrades when the expected wait exceeds the budget", "[admission]") {
  AdmissionGate g(gate(GateKind::wait_budget));
  CHECK(g.decide(4, 4, 50, 0).verdict == AdmissionVerdict::admit);  // 100 ms: fits exactly
  auto over = g.decide(8, 4, 50, 0);                                // 150 ms
  CHECK(over.verdict == AdmissionVerdict::reject_degrade);
  CHECK(over.expected_wait_ms == 150);
  CHECK(over.reason == "expected wait exceeds the wait budget");
  // A slower service time turns the same queue away sooner.
  CHECK(g.decide(0, 4, 150, 0).verdict == AdmissionVerdict::reject_degrade);
}

TEST_CASE("gate kinds and verdicts have names", "[admission]") {
  CHECK(parse_enum<GateKind>("wait_budget") == GateKind::wait_budget);
  CHECK(to_string(AdmissionVerdict::reject_degrade) == "reject_degrade");
  CHECK_THROWS(AdmissionGate(gate(GateKind::bounded, 0)));
}
