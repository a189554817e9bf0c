#pragma once
// A plan is what to put on the wire for one attempt: plain data, built by a fault kind's pure
// function, executed by the Beast session (or simulated by the virtual transport). The session
// never decides; it only follows the plan.
#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "llmchaos/core/types.hpp"
#include "llmchaos/mockprovider/script.hpp"

namespace llmchaos::mock {

struct SseFrame {
  std::string bytes;     // fully framed ("data: ...\n\n", "event: x\ndata: ...\n\n", "...\r\n\r\n")
  bool content = false;  // a visible content token (counts in events_sent and commits the attempt)
};

enum class WireAction {
  respond,           // send status, headers and the body / frames
  reset_after_head,  // read the head, then RST (SO_LINGER 0) before any response byte
  hold,              // send nothing; hold until the client closes, hold_ms passes, or shutdown
};

enum class StreamEnd {
  complete,          // all frames, then the chunked terminator (a clean HTTP end)
  abort,             // after the frames, close the TCP connection mid-body (no terminator)
  stall_then_abort,  // after the frames, silence for stall_ms, then close mid-body
};

struct Plan {
  FaultKind fault = FaultKind::ok;
  // The dialect of the route whose attempt it plans: a forwarder reads the answer by it.
  Dialect dialect = Dialect::openai;
  WireAction action = WireAction::respond;
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // content-type included
  double latency_ms = 0;                                     // before the status line (already time-scaled)
  double hold_ms = 0;                                        // WireAction::hold
  bool committed_on_arrival =
      false;  // post_commit_timeout: the provider did the work, the client never hears
  bool commits_when_sent =
      false;  // a plain answer: committed once written whole (streams commit per content frame)

  bool streamed = false;
  std::string body;              // !streamed
  std::vector<SseFrame> frames;  // streamed
  // A forwarded stream the plan does not edit (FaultTraits::keeps_healthy_stream): `frames` is empty, the
  // upstream's (or the cassette's) frames pass as they come.
  bool passes_upstream_stream = false;
  double first_event_ms = 0;            // delay before the first frame after headers
  double inter_event_ms = 0;            // delay between frames
  StreamEnd end = StreamEnd::complete;  // also for plain bodies: abort after body_cut_at bytes
  double stall_ms = 0;
  std::size_t body_cut_at =
      0;  // !streamed and end != complete: bytes of `body` sent (Content-Length announces all)

  std::string model;       // model the answer reports
  std::string request_id;  // echoed as x-request-id / request-id
  // The retry hint added (add_retry_hint: error plans only), for the ledger; hint_form `none`: no hint.
  double hint_ms = 0;
  RetryAfterForm hint_form = RetryAfterForm::none;
};

}  // namespace llmchaos::mock
