// The one table of fault kinds. To add one: a FaultKind name (core/types.hpp), a file here, a line
// below (see README.md in this folder).
#include "llmchaos/mockprovider/fault.hpp"

namespace llmchaos::mock {

extern const FaultSpec ok_fault, rate_429_fault, quota_429_fault, payment_402_fault, overloaded_fault,
    server_500_fault, server_500_context_fault, bad_request_fault, auth_fault, policy_fault, stream_cut_fault,
    stream_error_fault, stream_stall_fault, slow_first_token_fault, malformed_event_fault, no_terminator_fault,
    post_commit_timeout_fault, no_response_fault, connect_reset_fault, slow_fault, schema_missing_fault,
    prefill_rejected_fault;

namespace {
const FaultSpec* const fault_table[] = {
    &ok_fault,           &rate_429_fault,          &quota_429_fault,        &payment_402_fault,
    &overloaded_fault,   &server_500_fault,        &server_500_context_fault, &bad_request_fault,
    &auth_fault,         &policy_fault,            &stream_cut_fault,       &stream_error_fault,
    &stream_stall_fault, &slow_first_token_fault,  &malformed_event_fault,  &no_terminator_fault,
    &post_commit_timeout_fault, &no_response_fault, &connect_reset_fault,  &slow_fault,
    &schema_missing_fault, &prefill_rejected_fault};
}  // namespace

std::span<const FaultSpec* const> all_faults() { return fault_table; }

ErrorKind fault_error_kind(FaultKind kind) {
  switch (kind) {
    case FaultKind::rate_429: return ErrorKind::rate_limit;
    case FaultKind::quota_429: return ErrorKind::quota;
    case FaultKind::payment_402: return ErrorKind::payment;
    default: return ErrorKind::server;
  }
}

const FaultSpec& fault_spec(FaultKind kind) {
  for (const auto* spec : fault_table)
    if (spec->kind == kind) return *spec;
  return ok_fault;
}

}  // namespace llmchaos::mock
