#pragma once
// Live timeout-policy replay: the same trace played through real sockets. Each (request, policy)
// gets its own mock namespace whose routes replay that request's recorded attempts:
//   primary   = [primary_1, primary_2]   (the first and the second attempt on the primary)
//   alternate = [alternate]
// each as an `ok` step (or `server_500` when the recording failed) with the recorded latency.
// The client runs each policy directly with the HTTP transport (one attempt with timeout T, then the
// primary again or the alternate at T), not through the full decision executor: the study compares
// timeout policies, not the decision rules. Time is shrunk by `time_scale` (mock delays and T alike)
// and latencies are scaled back to trace seconds.
#include <span>
#include <string>
#include <vector>

#include "llmchaos/experiments/replay.hpp"

namespace llmchaos::experiments {

struct LiveReplayOptions {
  double time_scale = 0.05;
  int concurrency = 8;  // requests in flight at once
  // Real-time allowance per request for loopback, HTTP and scheduling overhead; sets the tolerance below.
  double jitter_ms = 25;
};

struct LiveReplayResult {
  std::vector<ReplayStats> stats;                     // per configuration
  std::vector<std::vector<RequestOutcome>> outcomes;  // per configuration, per request (trace seconds)
  std::size_t mock_attempts =
      0;  // attempts in the mock's ledger: must be one per request plus the extra calls
};

// Starts an in-process mock provider on 127.0.0.1 port 0, plays every configuration, stops it.
LiveReplayResult replay_live(std::span<const TraceRow> trace, std::span<const PolicyConfig> configs,
                             const LiveReplayOptions& options);

// The stated tolerance, per request: with guard = jitter_ms / time_scale (in trace seconds),
//  - a request whose primary_1 latency lies within the guard of T may land on either side of T and is
//    not compared (the share of such requests is the allowed difference in success rate and extra calls);
//  - every other request must have the same outcome and the same number of extra calls, and its live
//    latency must be within guard + 2% of the offline one (so every percentile is too);
//  - the mock's ledger must hold exactly one attempt per request plus the extra calls (no hidden retries).
struct LiveAgreement {
  std::string tolerance;                   // the rule above with the numbers filled in
  std::vector<std::string> disagreements;  // empty = agrees
};
LiveAgreement compare_live(std::span<const TraceRow> trace, std::span<const PolicyConfig> configs,
                           const LiveReplayResult& live, const LiveReplayOptions& options);

}  // namespace llmchaos::experiments
