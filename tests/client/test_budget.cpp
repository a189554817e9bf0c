// The budget ledger: one ledger across every layer (SPEC 3).
#include <catch2/catch.hpp>

#include "llmchaos/client/budget.hpp"
#include "llmchaos/core/clock.hpp"

using namespace llmchaos;
using namespace llmchaos::client;

TEST_CASE("limits come from the workflow policy", "[budget]") {
  WorkflowPolicy w;
  w.max_total_attempts = 4;
  w.max_elapsed_ms = 6000;
  w.max_extra_cost_usd = 0.012;
  auto l = BudgetLimits::from(w);
  CHECK(l.max_attempts == 4);
  CHECK(l.max_elapsed_ms == 6000);
  CHECK(l.max_extra_cost_usd == 0.012);
}

TEST_CASE("every layer draws on the same attempts, only attempts after the first cost extra", "[budget]") {
  ManualClock clock(1000);
  BudgetLedger ledger({3, 6000, 0.010}, clock.now_ms());
  ledger.record_attempt(AttemptKind::initial, 0.004);
  CHECK(ledger.attempts_left() == 2);
  CHECK(ledger.extra_cost_usd() == 0);
  ledger.record_attempt(AttemptKind::retry, 0.004);
  ledger.record_attempt(AttemptKind::redelivery, 0.004);
  CHECK(ledger.attempts_used() == 3);
  CHECK(ledger.attempts_left() == 0);
  CHECK(ledger.attempts_of(AttemptKind::initial) == 1);
  CHECK(ledger.attempts_of(AttemptKind::retry) == 1);
  CHECK(ledger.attempts_of(AttemptKind::fallback) == 0);
  CHECK(ledger.attempts_of(AttemptKind::redelivery) == 1);
  CHECK(ledger.extra_cost_usd() == Approx(0.008));
  CHECK(ledger.cost_left_usd() == Approx(0.002));
  // Going over (another layer did not ask) shows as nothing left, never negative.
  ledger.record_attempt(AttemptKind::fallback, 0.004);
  CHECK(ledger.attempts_left() == 0);
  CHECK(ledger.cost_left_usd() == 0);
}

TEST_CASE("time left runs on the injected clock from the request's start", "[budget]") {
  ManualClock clock(500);
  BudgetLedger ledger({3, 6000, 1}, clock.now_ms());
  clock.advance(2500);
  auto v = ledger.view(clock.now_ms());
  CHECK(v.elapsed_ms == 2500);
  CHECK(v.time_left_ms == 3500);
  clock.advance(4000);
  CHECK(ledger.time_left_ms(clock.now_ms()) == 0);
  CHECK(ledger.elapsed_ms(clock.now_ms()) == 6500);
}

TEST_CASE("the view carries exactly what the decision needs", "[budget]") {
  BudgetLedger ledger({2, 1000, 0.5}, 0);
  ledger.record_attempt(AttemptKind::initial, 0.1);
  ledger.record_attempt(AttemptKind::fallback, 0.2);
  auto v = ledger.view(250);
  CHECK(v.attempts_used == 2);
  CHECK(v.attempts_left == 0);
  CHECK(v.time_left_ms == 750);
  CHECK(v.extra_cost_usd == Approx(0.2));
  CHECK(v.cost_left_usd == Approx(0.3));
}
