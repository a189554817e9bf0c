#pragma once
// Admission gate (SPEC 8): what to do with a request arriving at a server of fixed capacity.
//  - unbounded: admit everything; a queued request that has waited longer than wait_cap_ms is given up
//    (degraded) when it would start (on_dequeue);
//  - bounded: admit while fewer than max_queue requests wait, else degrade at once;
//  - wait_budget: admit while the expected wait fits wait_budget_ms, else degrade at once.
// Value-level and pure: the caller passes the queue state and a service-time estimate.
#include <limits>
#include <string_view>
#include <utility>

#include "llmchaos/core/types.hpp"

namespace llmchaos::client {

enum class GateKind { unbounded, bounded, wait_budget };

struct AdmissionSettings {
  GateKind kind = GateKind::unbounded;
  int workers = 1;              // requests served at once (the capacity)
  double wait_cap_ms = 400;     // unbounded
  int max_queue = 24;           // bounded
  double wait_budget_ms = 100;  // wait_budget
};

enum class AdmissionVerdict { admit, reject_degrade };

struct AdmissionDecision {
  AdmissionVerdict verdict = AdmissionVerdict::admit;
  std::string_view reason;  // a fixed sentence ("bounded queue is full")
  double expected_wait_ms = 0;
  // unbounded: when a request admitted now is given up if it has not started (now + wait_cap_ms);
  // infinity for the other gates.
  double give_up_at_ms = std::numeric_limits<double>::infinity();
};

class AdmissionGate {
 public:
  explicit AdmissionGate(AdmissionSettings settings);

  // A request arrives: `queue_len` requests are waiting (not counting it), `workers_busy` are served.
  AdmissionDecision decide(int queue_len, int workers_busy, double expected_service_ms, double now_ms) const;
  // A queued request is about to start: the unbounded gate gives up on it past its wait cap.
  AdmissionDecision on_dequeue(double enqueued_at_ms, double now_ms) const;

  // Expected wait before a new arrival starts: 0 when a worker is free and nobody waits; otherwise
  // whole service rounds: (floor((queue_len - free workers) / workers) + 1) * service time.
  static double expected_wait_ms(int queue_len, int workers_busy, int workers, double expected_service_ms);
  const AdmissionSettings& settings() const { return settings_; }

 private:
  AdmissionSettings settings_;
};

}  // namespace llmchaos::client

namespace llmchaos {
template <>
struct enum_names<client::GateKind> {
  static constexpr std::pair<client::GateKind, std::string_view> table[] = {
      {client::GateKind::unbounded, "unbounded"},
      {client::GateKind::bounded, "bounded"},
      {client::GateKind::wait_budget, "wait_budget"}};
};
template <>
struct enum_names<client::AdmissionVerdict> {
  static constexpr std::pair<client::AdmissionVerdict, std::string_view> table[] = {
      {client::AdmissionVerdict::admit, "admit"},
      {client::AdmissionVerdict::reject_degrade, "reject_degrade"}};
};
}  // namespace llmchaos
