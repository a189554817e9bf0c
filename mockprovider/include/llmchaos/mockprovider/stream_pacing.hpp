#pragma once
// The pacing and the endings of an answer under a plan, written once for the mock's own answers
// (execute_plan.cpp) and a proxy's forwarded ones (proxy/src/answer_delivery.hpp): the scripted latency
// before anything, each frame's delay (first_event_ms before the first, inter_event_ms after), and the end
// the plan gives a stream or a cut body (terminator, abort, stall then abort). The caller calls
// ClientWire::cut() where its answer is cut. Asio types: include it only from sources.
#include <boost/asio/awaitable.hpp>

#include "llmchaos/mockprovider/forward_hook.hpp"
#include "llmchaos/mockprovider/plan.hpp"

namespace llmchaos::mock {

// The outcome of an answer whose wait ended before its time: the client left, or (shutdown) a cut.
inline AttemptOutcome ended_early(WaitEnd w) {
  return w == WaitEnd::client_closed ? AttemptOutcome::client_closed : AttemptOutcome::cut;
}

// The delay before a frame of the plan's stream.
inline double frame_delay(const Plan& plan, bool first_frame) {
  return first_frame ? plan.first_event_ms : plan.inter_event_ms;
}

// The plan's latency before anything is written; false (and out.outcome set) when the client left or the
// server stops meanwhile.
boost::asio::awaitable<bool> wait_latency(ClientWire& wire, const Plan& plan, Executed& out);

// Once every byte of the answer is written: the terminator (out.keep_open = keep_alive), or an abort,
// or a stall of stall_ms then the abort (out.outcome: cut, client_closed when the client left first).
boost::asio::awaitable<void> end_stream(ClientWire& wire, StreamEnd end, double stall_ms, bool keep_alive,
                                        Executed& out);

}  // namespace llmchaos::mock
