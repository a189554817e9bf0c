#pragma once
// What a run produced: one CaseResult per case (verdict, expected vs observed, checks, the mock's
// ledger and the stack's decision log) and run-level facts. Reports are pure functions of this.
// Plain data in its own target (llmchaos::results, over core only): the harness writes it and the
// reports read it, so reports do not link the harness. The namespace is the harness's: these are its
// verdicts, and the harness, the reports, the sessions and the CLI all name them so.
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmchaos/core/decision_log.hpp"
#include "llmchaos/core/ledger.hpp"
#include "llmchaos/core/types.hpp"

namespace llmchaos::harness {

// Jepsen: a hang or crash is unknown, never success. n/a: the case needs a capability the target
// declared it lacks (queue, degrade, ...): listed, counted neither as a pass nor as a failure.
enum class Verdict { pass, fail, unknown, na };
std::string_view to_string(Verdict v);

struct CheckResult {
  std::string name;  // "action", "action_agreement", "max_total_attempts", "no_hang", ...
  bool ok = true;
  std::string message;  // expected vs observed, in words
};

struct PointResult {
  int point = 0;
  Action expected = Action::none;     // none when the case does not pin this point
  Action from_log = Action::none;     // derived from the stack's decision log
  Action from_ledger = Action::none;  // derived from the ledger alone
  std::string rule;                   // rule that fired (from the log)
};

struct CaseResult {
  std::string name;
  std::string file;    // path as given
  std::string folder;  // classname: folder below cases/
  std::vector<std::string> tags;
  Verdict verdict = Verdict::unknown;
  std::string unknown_reason;  // "hang", "crash", "error: ..."
  // Why a fail or n/a verdict that no check of the history gave: "target error after a healthy
  // upstream answer", "needs capability queue (the target has: ...)".
  std::string reason;
  Action expected = Action::none;
  Action observed = Action::none;  // action at the first failure point (none: no failure)
  std::optional<Outcome> expected_outcome;
  std::optional<Outcome> observed_outcome;
  std::vector<PointResult> points;
  std::vector<CheckResult> checks;
  std::map<std::string, int> attempts_by_route;  // from the ledger
  std::vector<LedgerEntry> ledger;
  // Attempts the mock saw in the case's namespace that are not the case's requests (a path that is
  // no completion, a foreign Idempotency-Key: a forwarded drain, a health check): shown apart, never
  // counted as the requests' attempts.
  std::vector<LedgerEntry> foreign;
  std::vector<SideEffect> side_effects;
  std::vector<client::DecisionLog> logs;  // one per request (a sequence has many)
  std::string policy_name;
  std::string driver_output;  // exec driver: captured output (capped)
  double wall_ms = 0;
  // Added by the harness:
  std::string description;
  std::string policy_file;                       // shared policy file ("" = inline policy)
  std::vector<double> request_started_ms;        // start of each request after the case began (ledger origin)
  std::optional<client::DecisionLog> alive_log;  // [checks] alive_after: the healthy probe after the case
  double deadline_ms = 0;                        // the hard real-time deadline the case ran under
  std::vector<Action> observed_actions;  // every failure point's observed action, in order (the baseline)
  int index = -1;  // position in the whole suite before --shard (report merge restores the run order)
  // A live in-process run played this case under a virtual clock (an exact_time case: no socket needed).
  bool virtual_time = false;
};

struct BaselineChange {
  std::string case_name;
  Action before = Action::none;
  Action after = Action::none;
  // Added by the harness: the actions at every failure point (a change may be at a later point).
  std::vector<Action> before_all;
  std::vector<Action> after_all;
};

// `run --shard K/N`: which part of the suite this run played (count 0: the whole suite).
struct Shard {
  int index = 0;  // K, 1-based
  int count = 0;  // N
  bool sharded() const { return count > 0; }
};

// One setting of the system under test as the reports show it ("target_command", "...").
struct Setting {
  std::string name;
  std::string value;
};

struct RunResult {
  std::string tool_version = "0.1.0";
  std::uint64_t seed = 0;
  std::string driver = "inproc";
  double time_scale = 1;
  std::string started_at;  // ISO 8601 UTC
  double duration_ms = 0;
  std::vector<CaseResult> cases;
  std::vector<BaselineChange> baseline_changes;  // filled when --baseline was given
  std::string baseline;   // the --baseline path ("" = no baseline compared; reports say which)
  Shard shard;            // --shard K/N
  int merged_shards = 0;  // `report merge`: the number of shard reports merged into this one (0: not merged)
  std::string catalog;    // digest of the whole suite (every case name and file, before --shard)
  int catalog_cases = 0;  // cases in the whole suite (before --shard)
  std::string label;      // --label: the system under test as the scorecard names it ("portkey 1.15.2")
  std::vector<Setting> settings;      // the target's settings (--exec, --target-command, ...), in order
  std::vector<std::string> warnings;  // run-level warnings, also in every report's header (time scale, ...)
  int passed() const;
  int failed() const;
  int unknown() const;
  int not_applicable() const;
  std::map<Outcome, int> outcome_split() const;  // the metric split, over every request of every case
};

}  // namespace llmchaos::harness
