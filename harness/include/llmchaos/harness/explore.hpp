#pragma once
// `llmchaos explore`: seeded random fault schedules (or an exhaustive sweep of failure positions), each
// played under virtual time through the reference stack and checked two ways: an independent model of
// SPEC section 3 (spec_model.hpp) at every failure point, and the SPEC section 5 invariants of the harness
// checker. A violating schedule is shrunk (fewer routes, fewer steps, smaller parameters) while it still
// fails the same way, and written as a case file that `llmchaos run` reproduces. The same seed gives the
// same schedules and the same histories (a digest of them is printed).
#include <cstdint>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "llmchaos/core/rng.hpp"
#include "llmchaos/core/types.hpp"

namespace llmchaos::harness {

// ---- a schedule: what one run plays, rendered as a case file ----

struct ScheduleStep {
  FaultKind fault = FaultKind::ok;
  int times = 1;
  std::vector<std::pair<std::string, double>>
      params;                 // numeric step keys (latency_ms, cut_after_events, ...)
  std::string missing_field;  // schema_missing under an output contract
};

struct ScheduleRoute {
  std::string name;
  Dialect dialect = Dialect::openai;
  std::string text;  // the route's canonical answer
  std::vector<ScheduleStep> steps;
  // Policy keys, written only when the schedule carries its own policy.
  double expected_latency_ms = 300;
  double cost_per_attempt_usd = 0;
  bool approved = true;
};

struct Schedule {
  std::string name;
  std::string policy_file;  // a shared policy file (absolute path); "" = the inline policy below
  int max_total_attempts = 3;
  double max_elapsed_ms = 8000;
  std::optional<double> max_extra_cost_usd;
  double attempt_timeout_ms = 2000;
  bool replay_safe = false;
  bool queue_allowed = false;
  bool degrade_allowed = false;
  bool contract = false;  // output_required = ["label"]: every route's text is a JSON object with it
  double backoff_base_ms = 100;
  double backoff_cap_ms = 1000;
  std::vector<ScheduleRoute> routes;  // [0] is the primary, the rest the fallback chain in order
  bool stream = false;
  bool prefill = false;
  bool background = false;  // workflow `background = true`: a cut Responses stream may be resumed (rule 0)

  int step_count() const;
};

// What a written case expects (from the model); empty: `expect = "none"`.
struct CaseExpectations {
  std::vector<std::optional<Action>> actions;  // per failure point; nullopt = not pinned
  std::string description;
};

// The case file of a schedule. `policy_ref`: how the file names the policy file (relative to where the
// case is written); ignored for an inline policy.
std::string schedule_to_toml(const Schedule& s, const CaseExpectations& expect,
                             const std::string& policy_ref = {});

// Facts a schedule generator needs from a shared policy file (--policy).
struct PolicyShape {
  std::string file;                 // absolute path
  std::vector<std::string> routes;  // primary, then the fallback chain
  double attempt_timeout_ms = 2000;
  bool contract = false;
};
PolicyShape policy_shape(const std::string& policy_file);  // throws SpecError

// One random schedule: 1-3 routes (or the policy's), each a short sequence drawn from the fault catalog
// with random parameters, plain or streamed.
Schedule random_schedule(Rng& rng, const std::optional<PolicyShape>& policy, const std::string& name);

// The sweep's default policy and schedules: every fault kind on the n-th attempt of every route, plain
// and streamed, each route reached by failing the routes before it (quota) and the attempts before the
// n-th (overloaded).
Schedule sweep_base(const std::optional<PolicyShape>& policy);
Schedule sweep_schedule(const Schedule& base, std::size_t route, int n, FaultKind fault, Dialect dialect,
                        bool stream, const std::string& name, bool background = false);

// Smaller variants of a schedule, most aggressive first (a route, a step, then parameters).
std::vector<Schedule> shrink_candidates(const Schedule& s);

// ---- exploring ----

struct ExploreOptions {
  std::uint64_t seed = 0;
  int runs = 100;
  std::string policy_file;  // "" = a random inline policy per schedule
  std::string out_dir;      // where minimal cases are written ("" = nowhere)
  bool sweep = false;
  std::string mutation;  // a deliberately broken stack (mutation.hpp)
  int max_cases = 5;     // violations shrunk and written: the first of each kind
  int max_shrink_runs = 400;
  std::ostream* log = nullptr;  // one line per violation found
};

struct Violation {
  int run = 0;          // 0-based run that found it
  std::string kind;     // "spec_model", or the checker's invariant ("max_total_attempts", ...)
  std::string message;  // of the shrunk schedule
  int steps_before = 0, routes_before = 0;
  int steps_after = 0, routes_after = 0;
  int shrink_runs = 0;
  std::string case_text;    // the minimal case file
  std::string case_file;    // where it was written ("" when not)
  bool reproduced = false;  // the case file, loaded back and run under virtual time, fails
};

struct ExploreReport {
  std::uint64_t seed = 0;
  int runs = 0;
  int points = 0;      // failure points the model judged
  int not_judged = 0;  // failure points outside the model (a breaker may be open)
  int violating_runs = 0;
  std::vector<Violation> violations;  // shrunk, at most max_cases
  std::uint64_t digest = 0;           // FNV-1a over every run's schedule and history
  double elapsed_ms = 0;
};

// One schedule played and checked: every violation found ("kind: message").
struct Judged {
  std::string invalid;  // the schedule does not make a valid case (the loader's first error): nothing ran
  std::vector<std::pair<std::string, std::string>> violations;
  int points = 0, not_judged = 0;
  std::uint64_t digest = 0;
  CaseExpectations expect;  // the model's actions up to the first disagreement, for the case file
  std::map<std::string, int> attempts_by_route;  // what the mock received
  Action observed = Action::none;                // the stack's action at its first failure point
};
Judged judge_schedule(const Schedule& s, const std::string& mutation);

// Throws SpecError for a bad policy file, std::invalid_argument for a bad option, std::runtime_error when
// a case cannot be written.
ExploreReport explore(const ExploreOptions& options);

}  // namespace llmchaos::harness
