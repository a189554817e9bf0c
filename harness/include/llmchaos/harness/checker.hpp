#pragma once
// The checker (Jepsen: history -> pure checker). Pure functions of the case, the mock's ledger and the
// stack's decision logs; no clock, no I/O. Every check yields a CheckResult; the worst verdict wins; a
// check that throws yields `unknown`, never a crash.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/client/executor.hpp"
#include "llmchaos/core/ledger.hpp"
#include "llmchaos/harness/case.hpp"
#include "llmchaos/results/result.hpp"

namespace llmchaos::harness {

// One workflow request as the driver saw it.
struct RequestRecord {
  client::DecisionLog log;                        // delivery 1
  std::vector<client::DecisionLog> redeliveries;  // queue redeliveries of the same operation, in order
  double started_ms = 0;  // after the case's script was installed (the ledger's time origin), real ms
  double wall_ms = 0;     // how long the caller waited, real ms
};

// Everything a case run produced.
struct History {
  std::vector<LedgerEntry> ledger;  // the case's namespace, arrival order (its requests' attempts)
  std::vector<LedgerEntry>
      foreign;  // the namespace's other traffic (split_foreign): never the requests' attempts
  std::vector<SideEffect> side_effects;
  std::vector<RequestRecord> requests;
  std::optional<RequestRecord> alive;  // [checks] alive_after probe (its attempts are not in `ledger`)
  double wall_ms = 0;                  // the whole case, real ms
  // false when the driver cannot see the stack's decisions (exec, http): logs then carry only the
  // outcome and answer, and the actions come from the ledger alone.
  bool has_decision_log = true;
};

struct CheckOptions {
  double time_scale = 1;
  // Stated tolerance of the elapsed invariant: elapsed <= max_elapsed_ms * (1 + ratio) + extra_ms
  // (budget scaled, extra_ms real). Real sockets and a loaded machine add latency the policy cannot see.
  double elapsed_tolerance_ratio = 0.2;
  double elapsed_tolerance_ms = 100;
  // The clock was virtual (--virtual-time): times in the ledger are exact, so the bounds that real
  // sockets need slack for (the gap before a retry) are checked exactly.
  bool exact_time = false;
};

// ---- building blocks (each unit-tested on literal histories) ----

// Which scripted step served each ledger entry (by seq); nullptr when the attempt fell past the script
// (the route's `then` applied). Replays the engine's choice over the route's attempts in arrival order:
// steps are taken in order, each covering `times` attempts, or with `until_ms` every attempt (at most
// `times` when given) until its window ends.
std::map<std::uint64_t, const mock::Step*> resolve_steps(const mock::Script& script,
                                                         const std::vector<LedgerEntry>& ledger,
                                                         double time_scale);

// Whether `path` (the request target below the route) is a completion request of the dialect (a
// chat, messages or generateContent call), not a drain, a model list or another path a proxy forwarded.
bool is_completion_path(Dialect dialect, std::string_view path);

// Whether an entry is not the traffic of the requests whose operation ids are `keys`: a path that is
// no completion, or an Idempotency-Key that names none of them (no key at all is the requests': a
// target that does not forward the key cannot be told apart).
bool is_foreign(const LedgerEntry& entry, const std::vector<std::string>& keys);

// Moves the foreign entries of history.ledger (by the requests' operation ids, redeliveries included)
// into history.foreign, arrival order kept.
void split_foreign(History& history);

// Whether the mock saw this attempt fail, from the ledger alone: an error status, a stream or
// connection that did not end cleanly, or a fault that fails in band (stream error or malformed event
// on a 200, a content-filter finish, a missing required field when the workflow requires fields).
bool attempt_failed(const LedgerEntry& entry, const client::Policy& policy);

// Whether `next` resumes the stream `failed` broke off (SPEC 3 rule 0, ledger field resume_of): the
// action at `failed` is `resume`, not a retry.
bool resumes(const LedgerEntry& failed, const LedgerEntry& next);

// The attempts of one request (all its deliveries), matched to the mock's ledger entries.
struct RequestView {
  const RequestRecord* request = nullptr;
  std::vector<const client::DecisionLog*> deliveries;  // delivery 1, then redeliveries
  std::vector<const LedgerEntry*> entries;             // the ledger entries of this operation, arrival order
  // Per entry: the log attempt it matched (the n-th attempt the log sent to that route is the n-th
  // entry the mock saw on it) or nullptr, and the delivery it belongs to.
  std::vector<const client::AttemptRecord*> entry_attempt;
  std::vector<int> entry_delivery;
};

// A model group's member -> the group (Case::group_of): the checker takes a group's members for one
// route, as the stack does, when it matches attempts and derives actions.
using GroupOf = std::map<std::string, std::string>;

// Ledger entries grouped per request by their Idempotency-Key (= the log's operation id); with a
// single request every entry is its own. Entries whose key names no request go to `unmatched`. Log
// attempts match entries by route, a group's members counting as the group.
std::vector<RequestView> group_by_request(const History& history,
                                          std::vector<const LedgerEntry*>* unmatched = nullptr,
                                          const GroupOf& group_of = {});
// The views point into `history`: a temporary one would leave them dangling.
std::vector<RequestView> group_by_request(const History&& history,
                                          std::vector<const LedgerEntry*>* unmatched = nullptr,
                                          const GroupOf& group_of = {}) = delete;

// The actions at the failure points of one request, derived twice: from the decision log, and from the
// ledger (next attempt of the same delivery on the same route = retry, on another = fallback, none =
// degrade / queue / fail_closed by the delivery's outcome; a failed final attempt reported as a
// success = none). A failed ledger entry no log point refers to becomes a point of its own (from_log =
// none). `rule` carries the rule text of the log point. A group's members are one route: the next
// attempt on another member of the same group is a retry.
std::vector<PointResult> derive_points(const RequestView& request, const client::Policy& policy,
                                       bool has_decision_log, const GroupOf& group_of = {});

// ---- the checker ----

// Fills verdict, points, checks, observed action/outcome, attempts per route, the ledger and the logs
// of `result` (name, file, tags... are taken from the case).
CaseResult check_case(const Case& c, const History& history, const CheckOptions& options);

// The name of every check check_case runs, in report order (the one table, harness/src/checks.cpp).
std::vector<std::string_view> check_names();

// Worst verdict wins: any unknown -> unknown, else any failed check -> fail, else pass.
Verdict combine(const std::vector<CheckResult>& checks, bool any_unknown);

}  // namespace llmchaos::harness
