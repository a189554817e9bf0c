// The one table of fault kinds. To add one: a FaultKind name (core/types.hpp), a file here, a line
// below (see README.md in this folder).
#include <iterator>

#include "llmchaos/mockprovider/fault.hpp"

namespace llmchaos::mock {

extern const FaultSpec ok_fault, rate_429_fault, quota_429_fault, payment_402_fault, overloaded_fault,
    server_500_fault, server_500_context_fault, bad_request_fault, auth_fault, policy_fault, stream_cut_fault,
    stream_error_fault, stream_stall_fault, slow_first_token_fault, malformed_event_fault,
    no_terminator_fault, post_commit_timeout_fault, no_response_fault, connect_reset_fault, slow_fault,
    schema_missing_fault, prefill_rejected_fault;

namespace {
const FaultSpec* const fault_table[] = {&ok_fault,
                                        &rate_429_fault,
                                        &quota_429_fault,
                                        &payment_402_fault,
                                        &overloaded_fault,
                                        &server_500_fault,
                                        &server_500_context_fault,
                                        &bad_request_fault,
                                        &auth_fault,
                                        &policy_fault,
                                        &stream_cut_fault,
                                        &stream_error_fault,
                                        &stream_stall_fault,
                                        &slow_first_token_fault,
                                        &malformed_event_fault,
                                        &no_terminator_fault,
                                        &post_commit_timeout_fault,
                                        &no_response_fault,
                                        &connect_reset_fault,
                                        &slow_fault,
                                        &schema_missing_fault,
                                        &prefill_rejected_fault};
static_assert(std::size(fault_table) == std::size(enum_names<FaultKind>::table),
              "a fault kind without a spec in the table, or a FaultKind without a name");
}  // namespace

std::span<const FaultSpec* const> all_faults() {
  return fault_table;
}

// The table is in FaultKind order (test_faults.cpp checks it): a kind is its index.
const FaultSpec& fault_spec(FaultKind kind) {
  const auto i = static_cast<std::size_t>(kind);
  return i < std::size(fault_table) ? *fault_table[i] : ok_fault;
}

ErrorKind fault_error_kind(FaultKind kind) {
  return fault_spec(kind).error_body;
}

const FaultTraits& fault_traits(FaultKind kind) {
  return fault_spec(kind).traits;
}

}  // namespace llmchaos::mock
