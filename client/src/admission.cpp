#include "llmchaos/client/admission.hpp"

#include <algorithm>
#include <stdexcept>

namespace llmchaos::client {

AdmissionGate::AdmissionGate(AdmissionSettings settings) : settings_(settings) {
  if (settings_.workers < 1) throw std::invalid_argument("admission: workers must be >= 1");
}

double AdmissionGate::expected_wait_ms(int queue_len, int workers_busy, int workers,
                                       double expected_service_ms) {
  const int free = std::max(0, workers - workers_busy);
  if (queue_len < free) return 0;
  const int ahead = queue_len - free;  // waiting requests no free worker will take at once
  return (ahead / std::max(1, workers) + 1) * expected_service_ms;
}

AdmissionDecision AdmissionGate::decide(int queue_len, int workers_busy, double expected_service_ms,
                                        double now_ms) const {
  AdmissionDecision d;
  d.expected_wait_ms = expected_wait_ms(queue_len, workers_busy, settings_.workers, expected_service_ms);
  switch (settings_.kind) {
    case GateKind::unbounded:
      d.reason = "unbounded queue admits every request";
      d.give_up_at_ms = now_ms + settings_.wait_cap_ms;
      break;
    case GateKind::bounded:
      if (queue_len >= settings_.max_queue && d.expected_wait_ms > 0) {
        d.verdict = AdmissionVerdict::reject_degrade;
        d.reason = "bounded queue is full";
      } else {
        d.reason = "bounded queue has room";
      }
      break;
    case GateKind::wait_budget:
      if (d.expected_wait_ms > settings_.wait_budget_ms) {
        d.verdict = AdmissionVerdict::reject_degrade;
        d.reason = "expected wait exceeds the wait budget";
      } else {
        d.reason = "expected wait fits the wait budget";
      }
      break;
  }
  return d;
}

AdmissionDecision AdmissionGate::on_dequeue(double enqueued_at_ms, double now_ms) const {
  AdmissionDecision d;
  d.expected_wait_ms = 0;
  if (settings_.kind == GateKind::unbounded && now_ms - enqueued_at_ms > settings_.wait_cap_ms) {
    d.verdict = AdmissionVerdict::reject_degrade;
    d.reason = "waited longer than the wait cap";
  } else {
    d.reason = "starts within its wait limit";
  }
  return d;
}

}  // namespace llmchaos::client
