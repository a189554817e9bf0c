#pragma once
// A RunResult written by hand for the report tests: a pass, a fail with a timeline, an unknown hang,
// a sequence through a breaker opening, a queued request and its redelivery, and baseline changes.
#include <string>

#include "llmchaos/results/result.hpp"

namespace sample {

using namespace llmchaos;
using client::AttemptKind;
using client::AttemptRecord;
using client::DecisionLog;
using client::FailurePoint;
using harness::CaseResult;
using harness::CheckResult;
using harness::PointResult;
using harness::Verdict;

inline AttemptRecord attempt(int index, std::string route, int route_attempt, double start, double end,
                             int status, Owner owner, AttemptKind kind = AttemptKind::initial,
                             std::string reason = {}) {
  AttemptRecord a;
  a.index = index;
  a.route = std::move(route);
  a.route_attempt = route_attempt;
  a.kind = kind;
  a.start_ms = start;
  a.end_ms = end;
  a.status = status;
  a.owner = owner;
  a.reason = std::move(reason);
  return a;
}

inline FailurePoint point(int n, int attempt, std::string route, Action action, int rule,
                          std::string next = {}, double wait_ms = 0) {
  FailurePoint f;
  f.point = n;
  f.attempt = attempt;
  f.route = std::move(route);
  f.action = action;
  f.rule = rule;
  f.rule_text = "rule " + std::to_string(rule) + " of SPEC 3";
  f.inputs = "attempts_left=2 time_left_ms=7000";
  f.next_route = std::move(next);
  f.wait_ms = wait_ms;
  return f;
}

inline LedgerEntry entry(std::uint64_t seq, std::string route, int attempt, FaultKind fault, int status,
                         double received, double finished, bool done = true) {
  LedgerEntry e;
  e.seq = seq;
  e.route = std::move(route);
  e.attempt = attempt;
  e.fault = fault;
  e.status = status;
  e.received_at_ms = received;
  e.finished_at_ms = finished;
  e.finished = done;
  e.committed = status == 200;
  return e;
}

inline DecisionLog answered(std::string op, Outcome outcome, std::string route, double elapsed) {
  DecisionLog log;
  log.operation_id = std::move(op);
  log.outcome = outcome;
  log.answered = true;
  log.route = std::move(route);
  log.model = log.route + "-model";
  log.text = "the canonical answer";
  log.input_tokens = 12;
  log.output_tokens = 5;
  log.elapsed_ms = elapsed;
  log.journal = {R"({"op":")" + log.operation_id + R"(","state":"requested"})", "not json at all"};
  return log;
}

inline CaseResult fallback_pass() {
  CaseResult c;
  c.name = "rate 429 with retry-after longer than the SLO goes to the healthy fallback";
  c.description = "A long retry-after must not block a healthy fallback that fits the budget.";
  c.file = "cases/staging/rate_429_fallback.toml";
  c.folder = "staging";
  c.tags = {"staging", "rate"};
  c.verdict = Verdict::pass;
  c.expected = c.observed = Action::fallback;
  c.expected_outcome = c.observed_outcome = Outcome::fallback_recovery;
  c.points = {
      PointResult{1, Action::fallback, Action::fallback, Action::fallback, "5: fallback fits the budget"}};
  c.checks = {{"action", true, "expected fallback, observed fallback"},
              {"action_agreement", true, "log and ledger agree"},
              {"max_total_attempts", true, "2 attempts <= 3"}};
  c.attempts_by_route = {{"primary", 1}, {"backup", 1}};
  auto log = answered("op-fallback", Outcome::fallback_recovery, "backup", 2012);
  log.attempts = {attempt(0, "primary", 0, 0, 12, 429, Owner::rate, AttemptKind::initial,
                          "429 rate limit, retry-after 60 s"),
                  attempt(1, "backup", 0, 12.5, 2012, 200, Owner::none, AttemptKind::fallback)};
  log.failures = {point(1, 0, "primary", Action::fallback, 5, "backup")};
  log.extra_cost_usd = 0.0021;
  c.logs = {log};
  c.request_started_ms = {0};
  auto alive = answered("op-alive", Outcome::primary_success, "backup", 40);
  alive.attempts = {attempt(0, "backup", 0, 0, 40, 200, Owner::none)};
  c.alive_log = alive;
  c.ledger = {entry(1, "primary", 0, FaultKind::rate_429, 429, 0.4, 11.8),
              entry(2, "backup", 0, FaultKind::ok, 200, 12.9, 2011.7)};
  c.ledger[1].dialect = Dialect::anthropic;
  c.policy_name = "staging";
  c.policy_file = "cases/policies/staging.toml";
  c.wall_ms = 104;
  c.observed_actions = {Action::fallback};
  return c;
}

// Expected a queue, but the stack retried twice: a failed case, with hostile text in its name and reasons.
inline CaseResult retry_fail() {
  CaseResult c;
  c.name = "bare 500 <queues> & \"never\" retries | 'twice'";
  c.file = "cases/budget/bare_500.toml";
  c.folder = "budget";
  c.tags = {"budget"};
  c.verdict = Verdict::fail;
  c.expected = Action::queue;
  c.observed = Action::retry;
  c.expected_outcome = Outcome::queued;
  c.observed_outcome = Outcome::retry_recovery;
  c.points = {PointResult{1, Action::queue, Action::retry, Action::retry, "4: transient, retry fits"},
              PointResult{2, Action::none, Action::retry, Action::fallback, "4: transient, retry fits"}};
  c.checks = {{"action", false, "point 1: expected queue, observed retry"},
              {"action_agreement", false, "point 2: log says retry, ledger says fallback"},
              {"max_total_attempts", true, "3 attempts <= 3"}};
  c.attempts_by_route = {{"primary", 3}};
  auto log = answered("op-500", Outcome::retry_recovery, "primary", 730);
  log.attempts = {
      attempt(0, "primary", 0, 0, 10, 500, Owner::unknown, AttemptKind::initial,
              "bare 500\x01 with a control byte \xff"),
      attempt(1, "primary", 1, 260, 270, 500, Owner::unknown, AttemptKind::retry, "bare 500 <again>"),
      attempt(2, "primary", 2, 700, 730, 200, Owner::none, AttemptKind::retry)};
  log.failures = {point(1, 0, "primary", Action::retry, 4, "primary", 250),
                  point(2, 1, "primary", Action::retry, 4, "primary", 430)};
  c.logs = {log};
  c.ledger = {entry(3, "primary", 0, FaultKind::server_500, 500, 0.5, 9.5),
              entry(4, "primary", 1, FaultKind::server_500, 500, 260.5, 269.5),
              entry(5, "primary", 2, FaultKind::ok, 200, 700.5, 729.5)};
  c.policy_name = "queue-first";
  c.wall_ms = 35;
  c.observed_actions = {Action::retry, Action::retry};
  return c;
}

// The request never returned: the hard deadline turned it into "unknown: hang".
inline CaseResult hang_unknown() {
  CaseResult c;
  c.name = "post-commit timeout with no client timeout hangs";
  c.file = "cases/stalls/post_commit_hang.toml";
  c.folder = "stalls";
  c.verdict = Verdict::unknown;
  c.unknown_reason = "hang";
  c.expected = Action::fail_closed;
  c.ledger = {entry(6, "primary", 0, FaultKind::post_commit_timeout, 0, 1.0, 0, false)};
  c.ledger[0].committed = true;
  c.attempts_by_route = {{"primary", 1}};
  c.policy_name = "no-timeout";
  c.deadline_ms = 5000;
  c.wall_ms = 5000;
  return c;
}

// Five requests through one stack: the breaker opens during an outage, then a half-open probe heals it.
inline CaseResult breaker_sequence() {
  CaseResult c;
  c.name = "breaker opens during a 10 s outage and recovers after it";
  c.file = "cases/breaker/outage_sequence.toml";
  c.folder = "breaker";
  c.tags = {"sequence", "breaker"};
  c.verdict = Verdict::pass;
  c.expected = c.observed = Action::retry;
  c.expected_outcome = c.observed_outcome = Outcome::fallback_recovery;
  c.points = {PointResult{1, Action::retry, Action::retry, Action::retry, "4: transient, retry fits"},
              PointResult{2, Action::none, Action::fallback, Action::fallback, "5: fallback fits"}};
  c.checks = {{"action", true, "expected retry, observed retry"}, {"breaker_probes", true, "1 probe <= 1"}};
  auto first = answered("op-seq-1", Outcome::fallback_recovery, "backup", 1300);
  first.attempts = {attempt(0, "primary", 0, 0, 20, 503, Owner::transient),
                    attempt(1, "primary", 1, 220, 240, 503, Owner::transient, AttemptKind::retry),
                    attempt(2, "backup", 0, 240, 1300, 200, Owner::none, AttemptKind::fallback)};
  first.failures = {point(1, 0, "primary", Action::retry, 4, "primary", 200),
                    point(2, 1, "primary", Action::fallback, 5, "backup")};
  c.logs.push_back(first);
  c.ledger = {entry(7, "primary", 0, FaultKind::overloaded, 503, 0.5, 19),
              entry(8, "primary", 1, FaultKind::overloaded, 503, 220.5, 239),
              entry(9, "backup", 0, FaultKind::ok, 200, 240.5, 1299)};
  std::uint64_t seq = 10;
  for (int k = 2; k <= 3; ++k) {  // breaker open: no attempt on the primary at all
    auto log = answered("op-seq-" + std::to_string(k), Outcome::fallback_recovery, "backup", 1000);
    log.attempts = {attempt(0, "backup", 0, 0.5, 1000, 200, Owner::none, AttemptKind::fallback)};
    log.failures = {point(1, -1, "primary", Action::fallback, 5, "backup")};
    c.logs.push_back(log);
    c.ledger.push_back(
        entry(seq++, "backup", k - 1, FaultKind::ok, 200, 4000.0 * (k - 1), 4000.0 * (k - 1) + 999));
  }
  for (int k = 4; k <= 5; ++k) {  // healed: the half-open probe and then normal service
    auto log = answered("op-seq-" + std::to_string(k), Outcome::primary_success, "primary", 300);
    log.attempts = {attempt(0, "primary", k - 2, 0, 300, 200, Owner::none)};
    c.logs.push_back(log);
    c.ledger.push_back(
        entry(seq++, "primary", k - 2, FaultKind::ok, 200, 4000.0 * (k - 1), 4000.0 * (k - 1) + 299));
  }
  c.request_started_ms = {0, 4000, 8000, 12000, 16000};
  c.attempts_by_route = {{"primary", 4}, {"backup", 3}};
  c.policy_name = "breaker";
  c.wall_ms = 820;
  c.observed_actions = {Action::retry, Action::fallback, Action::fallback, Action::fallback};
  return c;
}

// A bare 500 queued (rule 3), then redelivered from the queue and served.
inline CaseResult queued_then_redelivered() {
  CaseResult c;
  c.name = "bare 500 with queueing allowed goes to the queue";
  c.file = "cases/queue_500.toml";
  c.verdict = Verdict::pass;
  c.expected = c.observed = Action::queue;
  c.expected_outcome = c.observed_outcome = Outcome::queued;
  c.points = {PointResult{1, Action::queue, Action::queue, Action::queue, "3: unknown owner, queue allowed"}};
  c.checks = {{"action", true, "expected queue, observed queue"}};
  DecisionLog queued;
  queued.operation_id = "op-q";
  queued.outcome = Outcome::queued;
  queued.elapsed_ms = 15;
  queued.attempts = {
      attempt(0, "primary", 0, 0, 15, 500, Owner::unknown, AttemptKind::initial, "500 without detail")};
  queued.failures = {point(1, 0, "primary", Action::queue, 3)};
  auto redelivered = answered("op-q", Outcome::primary_success, "primary", 25);
  redelivered.delivery = 2;
  redelivered.attempts = {attempt(1, "primary", 0, 0, 25, 200, Owner::none, AttemptKind::redelivery)};
  c.logs = {queued, redelivered};
  c.request_started_ms = {0, 50};
  c.ledger = {entry(20, "primary", 0, FaultKind::server_500, 500, 0.5, 14),
              entry(21, "primary", 1, FaultKind::ok, 200, 50.5, 74)};
  c.attempts_by_route = {{"primary", 2}};
  c.wall_ms = 80;
  c.observed_actions = {Action::queue};
  return c;
}

inline harness::RunResult run() {
  harness::RunResult r;
  r.seed = 424242;
  r.driver = "inproc";
  r.time_scale = 0.05;
  r.started_at = "2024-05-01T12:00:00Z";
  r.duration_ms = 3210;
  r.cases = {fallback_pass(), retry_fail(), hang_unknown(), breaker_sequence(), queued_then_redelivered()};
  r.baseline = "reports/baseline.json";
  harness::BaselineChange change;
  change.case_name = retry_fail().name;
  change.before = Action::queue;
  change.after = Action::retry;
  change.before_all = {Action::queue};
  change.after_all = {Action::retry, Action::retry};
  r.baseline_changes = {change};
  return r;
}

}  // namespace sample
