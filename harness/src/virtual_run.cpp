// One case under virtual time: its own ManualClock, shared by a mock engine and the client stack, and the
// virtual transport between them. Deterministic: the same case and seed give the same history.
#include <fmt/format.h>

#include <atomic>
#include <stdexcept>

#include "case_play.hpp"
#include "llmchaos/harness/runner.hpp"
#include "llmchaos/harness/virtual_transport.hpp"

namespace llmchaos::harness {

VirtualCaseRun run_case_virtual(const Case& c, const RunOptions& options) {
  const Driver* driver = find_driver(options.driver);
  if (!driver)
    throw std::invalid_argument(
        fmt::format("unknown driver \"{}\" (drivers: {})", options.driver, driver_names()));
  ManualClock clock;
  // The mock's draws (slow latencies) are seeded per case by play_case, as in a live run.
  mock::Engine engine(clock, options.time_scale, options.seed);
  RunOptions opt = options;
  if (!opt.make_transport) opt.make_transport = virtual_transport();
  const std::atomic<bool> never{false};
  auto played = detail::play_case(c, "case", detail::CaseWorld{engine, clock, "http://virtual.mock"}, *driver,
                                  opt, never);
  CheckOptions check;
  check.time_scale = options.time_scale;
  check.exact_time = true;
  VirtualCaseRun out{check_case(c, played.history, check), std::move(played.history)};
  out.result.driver_output = std::move(played.output);
  return out;
}

}  // namespace llmchaos::harness
