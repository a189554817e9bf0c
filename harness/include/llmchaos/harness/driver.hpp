#pragma once
// Drivers: what the harness drives against the mock provider. One small unit per driver under
// harness/drivers/, listed in one table (drivers/registry.cpp); see harness/drivers/README.md.
//   inproc  the reference client stack in this process (the CI gate for policy files)
//   http    a gateway / service under test whose upstreams point at the mock
//   exec    a program started per request with the mock's URLs in its environment
// The runner owns the mock, the namespaces, the ledger, the sequence timing and the deadline; a driver
// only turns one workflow request into what the caller saw (a decision log, as complete as it can be).
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/client/executor.hpp"
#include "llmchaos/client/transport.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/harness/case.hpp"
#include "llmchaos/mockprovider/engine.hpp"

namespace llmchaos::harness {

struct CaseEnv;
// Makes the transport a case's stack talks through: live sockets by default; `--virtual-time` (later)
// swaps in the simulated transport here (it plays the case's plans straight from `CaseEnv::engine`
// under a virtual clock), and nothing else changes.
using TransportFactory = std::function<std::unique_ptr<client::Transport>(const CaseEnv& env)>;

// Options of the whole run that some drivers need (checked once by Driver::validate).
struct DriverOptions {
  std::string exec_command;    // exec: the program and its arguments
  std::string target_url;      // http: the service under test
  std::string target_config;   // http: a config template rendered per case with the mock's route URLs
  std::string target_command;  // http: the service started per case ({config}, {port} substituted)
  std::string target_key = "sk-llmchaos-harness";  // http: sent as "Authorization: Bearer KEY"
  std::string mutation;  // inproc: a deliberately broken stack, for testing the tester (mutation.hpp)
  // http: where to redeliver queued requests: "" only after a 202 (queued) answer, "none" never, or
  // the path to POST (`--target-drain`, or `llmchaos.drain` in the template).
  std::string target_drain;
  std::vector<std::string> target_headers;  // http: "NAME: TEMPLATE", rendered per case (--target-header)
  // What the system under test can do (capabilities.hpp: queue, degrade, output_contract,
  // redelivery); nullopt: not declared, every one. A case needing an absent one is n/a.
  std::optional<std::vector<std::string>> capabilities;
  bool follows_time_scale =
      true;  // false: the target's timers cannot be scaled (`llmchaos.time_scale = false`)
  // http: route fields the template declares (`llmchaos.route_field.NAME = DIALECT: VALUE, ...`): NAME ->
  // dialect name -> value, rendered as {{route.ROUTE.NAME}}.
  std::map<std::string, std::map<std::string, std::string>> target_route_fields;
};

// What one case gives its driver.
struct CaseEnv {
  const Case* c = nullptr;
  std::string ns;                                     // the case's namespace in the mock
  std::string mock_base_url;                          // "http://127.0.0.1:PORT"
  std::map<std::string, client::Endpoint> endpoints;  // route -> endpoint inside the namespace
  double time_scale = 1;
  std::uint64_t seed = 0;  // this case's seed (from --seed and the case name)
  Clock* clock = nullptr;
  mock::Engine* engine = nullptr;  // the mock's engine (the case's namespace lives there)
  TransportFactory make_transport;
  double deadline_real_ms = 0;  // the case's hard deadline (0: none known); drivers stop before it
};

// Thrown by a driver when the system under test hung or crashed (exec: killed on its deadline, or
// ended by a signal): the case is `unknown: <reason>` with the captured output, and the run goes on.
struct UnknownVerdict : std::runtime_error {
  UnknownVerdict(std::string reason_, const std::string& message, std::string output_)
      : std::runtime_error(message), reason(std::move(reason_)), output(std::move(output_)) {}
  std::string reason;  // "hang", "crash"
  std::string output;
};

// One case's system under test; it lives for the whole case, so a sequence shares its breakers,
// limiters and pools. Called from one thread at a time, except send() of a driver that overlaps
// requests (Driver::overlapping_sends, for `[sequence] overlap`): then from one thread per request.
class CaseSession {
 public:
  virtual ~CaseSession() = default;
  // Runs one workflow request to its end and says what the caller saw.
  virtual client::DecisionLog send(const client::WorkflowRequest& request) = 0;
  // Redelivers what the stack queued (its attempts count in the same budget); empty when it cannot.
  virtual std::vector<client::DecisionLog> drain() { return {}; }
  // true when logs carry the stack's own decisions (attempts and failure points); false: only the
  // outcome and answer, so the checker derives the actions from the ledger alone. Asked once the
  // requests and the redeliveries ran (http: true when the target reported its points for all).
  virtual bool has_decision_log() const = 0;
  // Captured output (exec), shown in reports; capped by the driver.
  virtual std::string output() const { return {}; }
};

// Thrown by a driver when the system under test itself failed although the provider served it: the
// case is `fail: <reason>` (never a pass, never a correct fail_closed), with the captured output.
struct TargetFailure : std::runtime_error {
  TargetFailure(std::string reason_, const std::string& message, std::string output_)
      : std::runtime_error(message), reason(std::move(reason_)), output(std::move(output_)) {}
  std::string reason;  // "target error after a healthy upstream answer"
  std::string output;
};

struct Driver {
  std::string_view name;
  std::string_view summary;
  // "" when the options suit this driver, else a usage error to print.
  std::string (*validate)(const DriverOptions& options);
  std::unique_ptr<CaseSession> (*open)(const CaseEnv& env, const DriverOptions& options);
  // Optional (nullptr: nothing to do): once per run, after validate, completes the options from what
  // the target declares (the http driver's template keys) and judges the time scale; a usage error
  // or "", warnings appended (shown on the console and in every report's header).
  std::string (*prepare)(DriverOptions& options, double time_scale,
                         std::vector<std::string>& warnings) = nullptr;
  // Whether a session's send() may run for several requests at once (a case with `[sequence] overlap`
  // needs it; on a driver without it the case is n/a).
  bool overlapping_sends = false;
};

std::span<const Driver> drivers();
const Driver* find_driver(std::string_view name);  // nullptr when unknown
std::string driver_names();                        // "inproc, ..." for usage messages

}  // namespace llmchaos::harness
