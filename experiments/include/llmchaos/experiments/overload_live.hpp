#pragma once
// The live overload run: the model route is served by an in-process mock provider on 127.0.0.1
// (port 0) that answers each call after service_ms; the service's model slots are real threads, each
// making blocking HTTP calls through the client's HttpTransport (keep-alive, one connection per slot).
// Arrivals, the gate and the queue run in the same event loop as the simulation (run_overload), on the
// steady clock. The service's workers are a counted resource of that loop, not threads: only the calls
// to the model need threads.
#include <span>
#include <string>
#include <vector>

#include "llmchaos/experiments/overload.hpp"

namespace llmchaos::experiments {

// Every (gate, load) in turn against one mock provider; rows in gate-major order.
std::vector<OverloadRow> overload_live(std::span<const GateSpec> gates, std::span<const double> loads,
                                       const OverloadSettings& settings);
std::vector<OverloadRow> overload_virtual(std::span<const GateSpec> gates, std::span<const double> loads,
                                          const OverloadSettings& settings);

// The stated tolerance between a live row and the simulated row of the same gate, load and arrivals:
//  - coverage within 0.05 + 10% of the simulated coverage (absolute);
//  - achieved load within 5% of offered (as a share of offered) of the simulated one;
//  - p50 and p95 within 20% of the simulated value + slack_ms (loopback, scheduling and HTTP time per call).
struct OverloadAgreement {
  std::string tolerance;
  std::vector<std::string> disagreements;  // empty = agrees
};
OverloadAgreement compare_overload(std::span<const OverloadRow> live, std::span<const OverloadRow> simulated,
                                   double slack_ms = 25);

}  // namespace llmchaos::experiments
