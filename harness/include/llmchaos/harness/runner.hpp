#pragma once
// The runner: loads a suite, starts ONE mock provider on an ephemeral loopback port, runs every case
// in its own namespace on a bounded worker pool, each under a hard real-time deadline (a hung case is
// `unknown: hang` and the run goes on), and checks each history.
#include <atomic>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <vector>

#include "llmchaos/harness/case.hpp"
#include "llmchaos/harness/checker.hpp"
#include "llmchaos/harness/driver.hpp"
#include "llmchaos/results/result.hpp"

namespace llmchaos::harness {

struct SuiteLoad {
  std::vector<Case> cases;        // in path order, filtered
  std::vector<SpecError> errors;  // every load error of every file
  int skipped_policy_files = 0;   // shared policy files found among the paths (not cases)
};

// `filters`: a case is kept when any filter equals one of its tags or glob-matches its name or file
// (no filters: every case). Duplicate case names are an error (the baseline keys on them).
SuiteLoad load_suite(const std::vector<std::string>& paths, const std::vector<std::string>& filters);
bool matches_filter(const Case& c, const std::vector<std::string>& filters);
// Takes out the cases that need a virtual clock (`exact_time`), for a live run; returns their names.
std::vector<std::string> take_exact_time_cases(std::vector<Case>& cases);
// A live run keeps them in its results as n/a (not run: JUnit skipped, the reports' n/a count), with
// this reason.
inline constexpr std::string_view exact_time_not_run =
    "not run: an exact_time case sits on a time boundary only a virtual clock can hit (run it with "
    "--virtual-time)";

struct RunOptions {
  std::string driver = "inproc";
  DriverOptions driver_options;
  int jobs = 0;  // 0: the machine's cores
  std::uint64_t seed = 0;
  double time_scale = 1;
  double min_deadline_ms = 5000;  // no case gets a shorter hard deadline (real ms)
  // Progress: one line per finished case, or one \r-updated line when `progress_tty`.
  std::ostream* progress = nullptr;
  bool progress_tty = false;
  TransportFactory make_transport;  // empty: live HTTP over loopback (virtual_time: the virtual transport)
  // Every case in its own virtual world: a ManualClock shared by a mock engine and the stack, plans
  // played by VirtualTransport (virtual_transport.hpp). No sockets, no per-case thread or deadline.
  bool virtual_time = false;
};

struct RunOutcome {
  RunResult result;
  int abandoned = 0;  // case threads still running past their deadline when the run ended
};

// Throws std::invalid_argument for an unknown driver or options it rejects.
RunOutcome run_suite(const std::vector<Case>& cases, const RunOptions& options);

// One case under virtual time, on the calling thread (what run_suite does per case with virtual_time),
// with the history it was checked on. Throws what the case throws (std::invalid_argument for a bad driver).
struct VirtualCaseRun {
  CaseResult result;
  History history;
};
VirtualCaseRun run_case_virtual(const Case& c, const RunOptions& options);

// The environment of case `c` in namespace `ns` of the mock at `mock_base_url`: its routes' endpoints
// there, the time scale, its seed (from the run's and its name) and its hard deadline. The clock, engine
// and transport are the caller's to set.
CaseEnv case_env(const Case& c, const std::string& ns, const std::string& mock_base_url,
                 const RunOptions& options);

// After a case's requests: the ledger of `ns` once every attempt has ended (a client that gave up is
// seen closing a moment later: waits for that, at most a second), its foreign traffic split off
// (split_foreign), and its side effects, into `history`.
void collect_ledger(History& history, mock::Engine& engine, const std::string& ns, Clock& clock,
                    const std::atomic<bool>& cancelled);

// A case that produced no history of its own (hang, crash, a broken contract): its expectations, what the
// mock saw, verdict unknown with `reason`, and a failed "deadline" check saying `message`.
CaseResult unknown_result(const Case& c, const std::string& reason, const std::string& message,
                          std::vector<LedgerEntry> ledger);

// The same routes with nothing scripted: every attempt is healthy (the alive_after probe).
mock::Script healthy_script(const mock::Script& script);

// A case a live run does not play (a capability the target declared it lacks, an exact_time case):
// listed as n/a with `reason`, not played.
CaseResult not_applicable_result(const Case& c, const std::string& reason);

// The live transport (Beast HTTP/1.1 + SSE over loopback).
TransportFactory live_transport();

// The end-of-run table: one row per case (verdict, name, expected, observed, outcome, attempts, time)
// and the totals with the metric split.
std::string summary_table(const RunResult& run);

// A stable per-case seed: the run's seed mixed with the case name (independent of scheduling).
std::uint64_t case_seed(std::uint64_t run_seed, std::string_view case_name);

}  // namespace llmchaos::harness
