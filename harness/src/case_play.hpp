#pragma once
// Internal to the harness: playing one case against a mock engine and a clock, shared by the live runner
// (one mock server, the steady clock) and the virtual one (a ManualClock and an engine per case).
#include <atomic>
#include <string>

#include "llmchaos/core/clock.hpp"
#include "llmchaos/harness/checker.hpp"
#include "llmchaos/harness/driver.hpp"
#include "llmchaos/harness/runner.hpp"
#include "llmchaos/mockprovider/engine.hpp"

namespace llmchaos::harness::detail {

// Where a case plays: the engine that serves its namespace, the clock both sides read, the base URL.
struct CaseWorld {
  mock::Engine& engine;
  Clock& clock;
  std::string base_url;
};

struct Played {
  History history;
  std::string output;  // the driver's captured output
};

// Installs the case's script in `ns`, sends its requests (a sequence on schedule), redelivers what was
// queued, probes alive_after, and removes the namespace. Defined in runner.cpp.
Played play_case(const Case& c, const std::string& ns, const CaseWorld& world, const Driver& driver,
                 const RunOptions& options, const std::atomic<bool>& cancelled);

}  // namespace llmchaos::harness::detail
