// `llmchaos explore`: generator -> virtual-time run -> two checkers (the SPEC 3 model, the SPEC 5
// invariants) -> shrinker -> case file. Deterministic: no wall clock, no unseeded randomness decides
// anything, so a seed names its runs.
#include "llmchaos/harness/explore.hpp"

#include <fmt/format.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <set>
#include <stdexcept>

#include "llmchaos/client/dialect_codec.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/core/ledger.hpp"
#include "llmchaos/harness/case.hpp"
#include "llmchaos/harness/mutation.hpp"
#include "llmchaos/harness/runner.hpp"
#include "llmchaos/harness/spec_model.hpp"
#include "llmchaos/mockprovider/dialect.hpp"

namespace fs = std::filesystem;

namespace llmchaos::harness {
namespace {

// Every check `run` applies judges a generated run (issue 27: a check that fails the reference stack is a
// finding, of the stack or of the check). Only the checks of a case's written expectation are left out:
// a generated case states none of its own, the SPEC model is its expectation.
constexpr std::string_view expectation_checks[] = {"action",          "expect_at",    "expect_outcome",
                                                   "expect_attempts", "expect_share", "expect_rate_limited"};

bool judges_explore(std::string_view name) {
  return std::find(std::begin(expectation_checks), std::end(expectation_checks), name) ==
         std::end(expectation_checks);
}

std::uint64_t fnv(std::string_view s, std::uint64_t h = 1469598103934665603ull) {
  for (unsigned char ch : s) h = (h ^ ch) * 1099511628211ull;
  return h;
}

void log_text(const client::DecisionLog& log, std::string& out) {
  out += fmt::format("|{} {} {} {:.3f} {}", log.operation_id, to_string(log.outcome), log.route,
                     log.elapsed_ms, log.text);
  for (const auto& a : log.attempts)
    out += fmt::format(";a {} {} {} {} {:.3f}-{:.3f}", a.route, a.status, static_cast<int>(a.event),
                       to_string(a.owner), a.start_ms, a.end_ms);
  for (const auto& f : log.failures)
    out +=
        fmt::format(";f {} {} {} {} {:.3f}", f.attempt, to_string(f.action), f.rule, f.next_route, f.wait_ms);
}

// Everything a run produced that the digest covers: the mock's ledger and side effects, the stack's logs.
std::string history_text(const History& h) {
  std::string out = ledger_to_json(h.ledger) + side_effects_to_json(h.side_effects);
  for (const auto& r : h.requests) {
    log_text(r.log, out);
    for (const auto& d : r.redeliveries) log_text(d, out);
  }
  return out;
}

const std::string* message_of(const Judged& j, std::string_view kind) {
  for (const auto& [k, m] : j.violations)
    if (k == kind) return &m;
  return nullptr;
}

class Explorer {
 public:
  explicit Explorer(const ExploreOptions& o) : o_(o) {
    if (o.runs < 0) throw std::invalid_argument("--runs must be >= 0");
    if (!o.mutation.empty() && !find_mutation(o.mutation))
      throw std::invalid_argument(
          fmt::format("unknown mutation \"{}\" (mutations: {})", o.mutation, mutation_names()));
    if (!o.policy_file.empty())
      shape_ = policy_shape(fs::absolute(o.policy_file).lexically_normal().string());
    if (!o.out_dir.empty()) fs::create_directories(o.out_dir);
    rep_.seed = o.seed;
  }

  ExploreReport run() {
    SteadyClock wall;  // only reported, never decides anything
    if (o_.sweep)
      sweep();
    else
      random();
    rep_.digest = digest_;
    rep_.elapsed_ms = wall.now_ms();
    return std::move(rep_);
  }

 private:
  void random() {
    Rng master(o_.seed);
    for (int i = 0; i < o_.runs; ++i) {
      Rng rng = master.fork();
      consider(random_schedule(rng, shape_, fmt::format("explore seed {} run {}", o_.seed, i)), i);
    }
  }

  // Like Beast's fail_count: fail the n-th attempt of a route for n = 1, 2, ... until a run never reaches
  // the n-th attempt.
  void sweep() {
    const Schedule base = sweep_base(shape_);
    int run = 0;
    constexpr int max_position = 8;
    for (std::size_t r = 0; r < base.routes.size(); ++r)
      for (const auto& [fault, fault_name] : enum_names<FaultKind>::table) {
        // SPEC 2: schema_missing lacks a field "the workflow's output schema requires": none without one.
        if (fault == FaultKind::schema_missing && !base.contract) continue;
        for (const auto& [dialect, dialect_name] : enum_names<Dialect>::table)
          for (const bool stream : {false, true})
            // Only dialects the reference client speaks (the mock may serve one before the client reads it).
            if (client::has_codec(dialect))
              // A background workflow (rule 0, resume) only where it means something: a streamed route of a
              // dialect that stores responses, under the sweep's own policy.
              for (const bool background : {false, true}) {
                if (background &&
                    !(stream && mock::dialect_spec(dialect).stores_responses && base.policy_file.empty()))
                  continue;
                for (int n = 1; n <= max_position; ++n) {
                  const auto name = fmt::format(
                      "explore sweep: {} attempt {} {} on {} ({}{})", base.routes[r].name, n, fault_name,
                      dialect_name, stream ? "streamed" : "plain", background ? ", background" : "");
                  const Judged j =
                      consider(sweep_schedule(base, r, n, fault, dialect, stream, name, background), run++);
                  const auto it = j.attempts_by_route.find(base.routes[r].name);
                  if (it == j.attempts_by_route.end() || it->second < n) break;
                }
              }
      }
  }

  Judged consider(const Schedule& s, int run) {
    Judged j = judge_schedule(s, o_.mutation);
    if (!j.invalid.empty())
      throw std::logic_error(
          fmt::format("explore: schedule \"{}\" is not a valid case: {}", s.name, j.invalid));
    ++rep_.runs;
    rep_.points += j.points;
    rep_.not_judged += j.not_judged;
    digest_ = fnv(fmt::format("{:016x}", j.digest), digest_);
    if (j.violations.empty()) return j;
    ++rep_.violating_runs;
    const auto& [kind, message] = j.violations.front();
    if (o_.log) *o_.log << fmt::format("run {} ({}): {}: {}\n", run, s.name, kind, message);
    if (!kinds_.count(kind) && static_cast<int>(rep_.violations.size()) < o_.max_cases) {
      kinds_.insert(kind);
      rep_.violations.push_back(shrink(s, j, run, kind));
      if (o_.log) {
        const auto& v = rep_.violations.back();
        *o_.log << fmt::format(
            "  shrunk in {} runs from {} step(s) on {} route(s) to {} step(s) on {} route(s){}{}\n",
            v.shrink_runs, v.steps_before, v.routes_before, v.steps_after, v.routes_after,
            v.case_file.empty() ? "" : ": " + v.case_file, v.reproduced ? "" : " (NOT reproduced)");
      }
    }
    return j;
  }

  // Greedy: take the first smaller schedule that still shows a violation of the same kind, until none does.
  Violation shrink(const Schedule& s, const Judged& found, int run, const std::string& kind) {
    Violation v;
    v.run = run;
    v.kind = kind;
    v.steps_before = s.step_count();
    v.routes_before = static_cast<int>(s.routes.size());
    Schedule best = s;
    Judged best_j = found;
    for (bool changed = true; changed;) {
      changed = false;
      for (auto& candidate : shrink_candidates(best)) {
        if (v.shrink_runs >= o_.max_shrink_runs) break;
        ++v.shrink_runs;
        Judged cj = judge_schedule(candidate, o_.mutation);
        if (!cj.invalid.empty() || !message_of(cj, kind)) continue;
        best = std::move(candidate);
        best_j = std::move(cj);
        changed = true;
        break;
      }
    }
    v.message = *message_of(best_j, kind);
    v.steps_after = best.step_count();
    v.routes_after = static_cast<int>(best.routes.size());

    CaseExpectations expect = best_j.expect;
    // No point SPEC 3 sees: `expect = "none"`; a first point it cannot judge: pin what the stack did.
    if (!expect.actions.empty() && !expect.actions.front()) expect.actions.front() = best_j.observed;
    const auto how = o_.sweep ? std::string("--sweep") : fmt::format("--seed {}", o_.seed);
    const auto mutate = o_.mutation.empty() ? std::string() : " --mutate " + o_.mutation;
    expect.description = fmt::format(
        "Found by `llmchaos explore {}{}` (run {}): {}: {}. Shrunk from {} step(s) on {} route(s) to {} "
        "step(s) on {} "
        "route(s). The expected actions are SPEC section 3's (explore's independent model), up to the first "
        "point "
        "where the stack differs.",
        how, mutate, run, kind, v.message, v.steps_before, v.routes_before, v.steps_after, v.routes_after);

    std::string policy_ref;
    if (!o_.out_dir.empty() && !best.policy_file.empty())
      policy_ref = fs::relative(best.policy_file, fs::absolute(o_.out_dir)).generic_string();
    v.case_text = schedule_to_toml(best, expect, policy_ref);
    if (!o_.out_dir.empty()) {
      const auto path =
          (fs::path(o_.out_dir) /
           fmt::format("explore-{}-{}.toml", o_.sweep ? std::string("sweep") : std::to_string(o_.seed), run))
              .string();
      std::ofstream f(path, std::ios::binary | std::ios::trunc);
      f << v.case_text;
      f.close();
      if (!f) throw std::runtime_error(fmt::format("explore: cannot write {}", path));
      if (auto errors = lint_file(path); !errors.empty())
        throw std::logic_error(
            fmt::format("explore: the case it wrote does not lint: {}", errors.front().what()));
      v.case_file = path;
    }
    v.reproduced = reproduces(v);
    return v;
  }

  // The written case, loaded back like `llmchaos run` loads it, fails under virtual time.
  bool reproduces(const Violation& v) const {
    auto loaded =
        v.case_file.empty() ? load_case_text(v.case_text, "explore.toml") : load_case_file(v.case_file);
    if (!loaded.value) return false;
    RunOptions opt;
    opt.virtual_time = true;
    opt.driver_options.mutation = o_.mutation;
    return run_case_virtual(*loaded.value, opt).result.verdict != Verdict::pass;
  }

  const ExploreOptions& o_;
  std::optional<PolicyShape> shape_;
  ExploreReport rep_;
  std::set<std::string> kinds_;
  std::uint64_t digest_ = fnv("llmchaos explore");
};

}  // namespace

Judged judge_schedule(const Schedule& s, const std::string& mutation) {
  Judged j;
  const std::string text = schedule_to_toml(s, {});
  auto loaded = load_case_text(text, s.name + ".toml");
  if (!loaded.value) {
    j.invalid = loaded.errors.empty() ? std::string("the case did not load")
                                      : std::string(loaded.errors.front().what());
    return j;
  }
  const Case& c = *loaded.value;
  RunOptions opt;
  opt.virtual_time = true;
  opt.driver_options.mutation = mutation;
  VirtualCaseRun run;
  try {
    run = run_case_virtual(c, opt);
  } catch (const std::exception& e) {
    j.violations.emplace_back("crash", e.what());
    j.digest = fnv(text);
    return j;
  }
  const auto model = spec_points(c, run.history, opt.time_scale);
  int first_difference = INT_MAX;
  for (auto& d : compare_with_spec(run.history, model)) {
    first_difference = std::min(first_difference, d.point);
    j.violations.emplace_back("spec_model", std::move(d.message));
  }
  for (const auto& check : run.result.checks)
    if (!check.ok && judges_explore(check.name)) j.violations.emplace_back(check.name, check.message);
  if (run.result.verdict == Verdict::unknown) j.violations.emplace_back("unknown", run.result.unknown_reason);
  for (const auto& p : model) {
    (p.action ? j.points : j.not_judged) += 1;
    if (p.point <= first_difference) j.expect.actions.push_back(p.action);
  }
  j.attempts_by_route = run.result.attempts_by_route;
  j.observed = run.result.observed;
  j.digest = fnv(history_text(run.history), fnv(text));
  return j;
}

ExploreReport explore(const ExploreOptions& options) {
  return Explorer(options).run();
}

}  // namespace llmchaos::harness
