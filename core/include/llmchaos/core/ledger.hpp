#pragma once
// The attempt ledger: what the mock provider saw, one entry per attempt, in arrival order.
// It is the single source of truth the checkers read (Jepsen's history).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "llmchaos/core/types.hpp"

namespace llmchaos {

struct LedgerEntry {
  std::uint64_t seq = 0;  // global arrival order
  std::string ns;         // namespace ("" = default)
  std::string route;
  Dialect dialect = Dialect::openai;
  int attempt = 0;            // attempt index on this route within the namespace (0-based)
  double received_at_ms = 0;  // ms after the namespace's script was installed
  double finished_at_ms = 0;  // when the mock finished answering (same origin)
  // The silence the mock planned before the status line (scaled): latency_ms plus slow's draw, or the
  // whole hold of post_commit_timeout / no_response (a held attempt that ended sooner: the client gave up).
  double planned_latency_ms = 0;
  std::string path;  // request target below the route
  bool stream = false;
  std::string model;            // model asked for
  std::string idempotency_key;  // request headers, empty when absent
  std::string stainless_retry_count;
  // The AWS SDKs' amz-sdk-invocation-id (the same on every retry of one call: it groups an SDK's
  // attempts) and amz-sdk-request ("attempt=N; max=M"). JSON: only when sent.
  std::string amz_sdk_invocation_id, amz_sdk_request;
  std::string request_id;  // the id the mock answered with
  FaultKind fault = FaultKind::ok;
  int status = 0;  // HTTP status sent (0 = none: reset / hold)
  AttemptOutcome outcome = AttemptOutcome::completed;
  int events_sent = 0;     // content events written (streams)
  bool committed = false;  // the provider did the work (tokens generated / side effect)
  bool finished = false;   // false while the attempt is still being served
  // `llmchaos proxy`: the attempt was forwarded to the upstream (the JSON has these fields only then).
  bool forwarded = false;
  int upstream_status = 0;      // the upstream's HTTP status (0: no answer: connect or read failed)
  double upstream_head_ms = 0;  // from forwarding the request to the upstream's status line
  double upstream_ms = 0;       // from forwarding the request to the end of the upstream's answer (as read)
  // A resume (Responses API `GET /v1/responses/{id}?stream=true&starting_after=N`, SPEC 3 rule 0): the
  // seq of the attempt that created the background response, and N. The JSON has these fields only on
  // a resume (resume_of 0 = not one), so a reader of the older shape sees nothing new.
  std::uint64_t resume_of = 0;
  std::int64_t starting_after = -1;  // -1: the stored stream from its start
  bool background = false;  // the request created a stored background response (JSON: only when true)
  // The route requires a credential (require_auth) and the request carried none: the provider refused it
  // before any work (fault `auth`, its missing-key status and body). JSON: only when true.
  bool missing_credential = false;
  // The retry hint the answer really carried (a fault's default included, not only the script's key):
  // its wait in scaled ms and its form (a mock::RetryAfterForm name: seconds, ms, both, http_date,
  // retry_info, anthropic_ratelimit). Absent: the answer carried none. JSON: only when present.
  std::optional<double> retry_after_sent_ms;
  std::string retry_after_form;
  // The protocol the attempt came over: http/1.1 or h2 (HTTP/2, h2c). JSON: only when over a wire (an
  // attempt played under virtual time has none), so the catalog's virtual-time reports keep their shape.
  WireProtocol protocol = WireProtocol::none;
};

// A tool side effect executed by a client against the mock's side-effect endpoint.
struct SideEffect {
  std::uint64_t seq = 0;
  std::string ns;
  std::string operation_id;
  std::string tool;
  double received_at_ms = 0;
};

std::string ledger_to_json(const std::vector<LedgerEntry>& entries);
std::vector<LedgerEntry> ledger_from_json(std::string_view json);  // throws std::runtime_error
std::string side_effects_to_json(const std::vector<SideEffect>& effects);
std::vector<SideEffect> side_effects_from_json(std::string_view json);

}  // namespace llmchaos
