#pragma once
// Literal histories for the checker tests: a ledger entry or a log attempt per line.
#include <string>
#include <vector>

#include "llmchaos/harness/case.hpp"
#include "llmchaos/harness/checker.hpp"

namespace llmchaos::harness::test {

inline const std::string op = "op-1";

// One mock ledger entry. `at` / `until`: received / finished (ms after install).
inline LedgerEntry entry(std::uint64_t seq, const std::string& route, int attempt, FaultKind fault,
                         int status, double at = 0, double until = 1,
                         AttemptOutcome outcome = AttemptOutcome::completed, bool committed = false,
                         const std::string& key = op) {
  LedgerEntry e;
  e.seq = seq;
  e.route = route;
  e.attempt = attempt;
  e.fault = fault;
  e.status = status;
  e.received_at_ms = at;
  e.finished_at_ms = until;
  e.outcome = outcome;
  e.committed = committed || (status == 200 && outcome == AttemptOutcome::completed);
  e.finished = true;
  e.idempotency_key = key;
  e.model = "mock-model";
  return e;
}

inline client::AttemptRecord attempt(int index, const std::string& route, Owner owner = Owner::none) {
  client::AttemptRecord a;
  a.index = index;
  a.route = route;
  a.owner = owner;
  return a;
}

inline client::FailurePoint point(int attempt, const std::string& route, Action action, int rule = 4) {
  client::FailurePoint f;
  f.attempt = attempt;
  f.route = route;
  f.action = action;
  f.rule = rule;
  f.rule_text = std::to_string(rule) + ": test rule";
  return f;
}

inline client::DecisionLog log(std::vector<client::AttemptRecord> attempts,
                               std::vector<client::FailurePoint> failures, Outcome outcome,
                               const std::string& route = "primary",
                               const std::string& text = "hello from the mock provider") {
  client::DecisionLog l;
  l.operation_id = op;
  l.attempts = std::move(attempts);
  l.failures = std::move(failures);
  for (std::size_t i = 0; i < l.failures.size(); ++i) l.failures[i].point = static_cast<int>(i) + 1;
  l.outcome = outcome;
  l.answered = outcome != Outcome::fail_closed && outcome != Outcome::queued;
  if (l.answered) {
    l.text = text;
    l.route = route;
    l.model = "mock-model";
    l.output_tokens = 5;
  }
  l.elapsed_ms = 10;
  return l;
}

inline History history(std::vector<LedgerEntry> ledger, client::DecisionLog l) {
  History h;
  h.ledger = std::move(ledger);
  RequestRecord r;
  r.log = std::move(l);
  r.wall_ms = 10;
  h.requests.push_back(std::move(r));
  h.wall_ms = 10;
  return h;
}

// A case with routes primary (openai) and backup (anthropic) and the given expectation.
inline Case make_case(Action expect) {
  Case c;
  c.name = "literal";
  c.expect = expect;
  c.policy.workflow.primary = "primary";
  c.policy.workflow.fallback = {"backup"};
  c.policy.workflow.max_total_attempts = 3;
  c.policy.workflow.max_elapsed_ms = 8000;
  for (const char* name : {"primary", "backup"}) {
    mock::RouteScript r;
    r.name = name;
    r.dialect = std::string(name) == "primary" ? Dialect::openai : Dialect::anthropic;
    c.script.routes[name] = r;
    c.policy.routes[name].name = name;
  }
  return c;
}

inline const CheckResult* find_check(const CaseResult& r, const std::string& name) {
  for (const auto& c : r.checks)
    if (c.name == name) return &c;
  return nullptr;
}

}  // namespace llmchaos::harness::test
