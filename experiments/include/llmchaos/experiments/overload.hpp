#pragma once
// Overload admission study (SPEC 8). A model route of fixed capacity (capacity/s, service_ms per call,
// so capacity x service_ms concurrent calls: the model's "slots") sits behind a service with `workers`
// request handlers and one admission gate:
//   unbounded:WAITCAP_MS  queue without limit; a waiting request holds its worker; gives up (degraded
//                         default answer) when it has waited WAITCAP_MS without starting
//   bounded:N             at most N waiting; an arrival that finds the queue full is degraded at once
//   admission:BUDGET_MS   admitted only while the expected wait fits the budget, else degraded at once
// The gate's decision logic is client::AdmissionGate (client/admission.hpp); the queue mechanics are
// ServiceCore below. An arrival that finds every worker busy is never accepted (connection refused).
//
// Load is open loop: arrivals at intended times (constant or Poisson), never held back by the service,
// and every latency is measured from the intended send time (no coordinated omission).
#include <cstddef>
#include <cstdint>
#include <deque>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/client/admission.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/core/rng.hpp"

namespace llmchaos::experiments {

struct GateSpec {
  client::GateKind kind = client::GateKind::unbounded;
  double wait_cap_ms = 400;   // unbounded
  int queue_limit = 24;       // bounded
  double budget_ms = 100;     // admission
  std::string label() const;  // "unbounded:400", "bounded:24", "admission:100"
};
// "unbounded:400" / "bounded:24" / "admission:100"; throws std::invalid_argument saying what is wrong.
GateSpec parse_gate(std::string_view text);

enum class ArrivalProcess { constant, poisson };

struct OverloadSettings {
  double capacity_per_sec = 80;
  double service_ms = 50;
  int workers = 64;
  double duration_ms = 5000;  // arrivals are generated for this long; the run ends when all are answered
  ArrivalProcess arrivals = ArrivalProcess::poisson;
  std::uint64_t seed = 1;
  int model_slots() const;  // round(capacity x service_ms / 1000), at least 1
};

// Intended send times (ms after the start) of an open-loop load of `rate_per_sec`.
std::vector<double> arrival_times(double rate_per_sec, double duration_ms, ArrivalProcess process, Rng& rng);

enum class Fate { pending, served, degraded, gave_up, never_accepted, model_error };

// The service's queue mechanics around one gate: pure state, no clock, no I/O. The caller passes the
// time with each event and starts the model calls it is told to start.
class ServiceCore {
 public:
  ServiceCore(const GateSpec& gate, const OverloadSettings& settings);

  struct ArrivalResult {
    Fate fate = Fate::pending;  // never_accepted, degraded (at once), or pending (accepted)
    bool start_now = false;     // accepted and a model slot was free
  };
  ArrivalResult arrive(std::size_t id, double now_ms);
  // A model call ended: frees its slot and worker; returns the queued requests to start now, and the
  // ones the gate gave up on when they reached the head (appended to `gave_up`).
  std::vector<std::size_t> finish(double now_ms, std::vector<std::size_t>& gave_up);
  // Unbounded gate: gives up every queued request whose wait cap has passed; returns their ids.
  std::vector<std::size_t> expire(double now_ms);
  double next_expiry_ms() const;  // infinity when nothing can expire

  int workers_busy() const { return workers_busy_; }
  int slots_busy() const { return slots_busy_; }
  std::size_t queued() const { return queue_.size(); }

 private:
  struct Waiting {
    std::size_t id;
    double enqueued_ms;
    double give_up_at_ms;
  };
  client::AdmissionGate gate_;
  double service_ms_;
  int workers_;
  int slots_;
  int workers_busy_ = 0;
  int slots_busy_ = 0;
  std::deque<Waiting> queue_;
};

// One (gate, load) run.
struct OverloadRow {
  std::string gate;
  double load = 1;  // times capacity
  double offered_per_sec = 0, achieved_per_sec = 0;
  std::size_t offered = 0, accepted = 0, served = 0, degraded = 0, gave_up = 0, never_accepted = 0,
              model_errors = 0;
  double coverage = 0;                        // served / accepted
  double p50_ms = 0, p95_ms = 0, p99_ms = 0;  // served latency from the intended send time; NaN when none
  bool biased = false;  // achieved < 95% of offered: coverage is biased upward (survivorship)
};

// Per-request fates and latencies -> the row (shared by the virtual and the live run).
OverloadRow summarize_overload(const GateSpec& gate, double load, double duration_ms,
                               const std::vector<Fate>& fates, const std::vector<double>& served_latency_ms);

// How model calls are made and how time passes. The event loop is the same for the simulation and
// the live run; only this differs.
class ModelBackend {
 public:
  virtual ~ModelBackend() = default;
  virtual Clock& clock() = 0;
  virtual void start(std::size_t id) = 0;  // begin a model call for request `id` now
  struct Completion {
    std::size_t id;
    bool ok;
  };
  // The next finished call, or nothing once `deadline_ms` (on clock()) is reached first.
  // With nothing in flight and an infinite deadline it returns nothing at once.
  virtual std::optional<Completion> wait(double deadline_ms) = 0;
};

// Plays `arrivals` (ms after the start of `backend.clock()`) through the gate.
OverloadRow run_overload(const GateSpec& gate, const OverloadSettings& settings, double load,
                         const std::vector<double>& arrivals, ModelBackend& backend);

// The discrete-event simulation: ManualClock, seeded arrivals, model calls of exactly service_ms.
OverloadRow simulate_overload(const GateSpec& gate, const OverloadSettings& settings, double load);

// Arrivals for one load: seeded from settings.seed and the load, so every gate sees the same arrivals.
std::vector<double> arrivals_for(const OverloadSettings& settings, double load);

}  // namespace llmchaos::experiments
