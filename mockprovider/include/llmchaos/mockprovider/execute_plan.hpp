#pragma once
// How a plan is carried out on a client's wire, in one order for every protocol: HTTP/1.1 (the session,
// serving/session.cpp) and HTTP/2 (http2/, a stream). The reset, the hold, the scripted latency, then a
// whole plain answer, a plain answer cut after body_cut_at bytes, or a stream paced frame by frame
// (first_event_ms, then inter_event_ms) with the end the plan says (terminator, abort, stall then abort:
// stream_pacing.hpp, shared with the proxy). A cut calls ClientWire::cut(): HTTP/1.1 then closes the
// connection, HTTP/2 resets the stream. Asio types: include it only from sources.
#include <boost/asio/awaitable.hpp>

#include "llmchaos/mockprovider/forward_hook.hpp"
#include "llmchaos/mockprovider/plan.hpp"

namespace llmchaos::mock {

boost::asio::awaitable<Executed> execute_plan(ClientWire& wire, const Plan& plan, bool keep_alive);

}  // namespace llmchaos::mock
