// The pacing and endings of an answer (stream_pacing.hpp).
#include "llmchaos/mockprovider/stream_pacing.hpp"

namespace net = boost::asio;

namespace llmchaos::mock {

net::awaitable<bool> wait_latency(ClientWire& wire, const Plan& plan, Executed& out) {
  if (!(plan.latency_ms > 0)) co_return true;
  const WaitEnd w = co_await wire.wait(plan.latency_ms);
  if (w == WaitEnd::elapsed) co_return true;
  out.outcome = ended_early(w);
  co_return false;
}

net::awaitable<void> end_stream(ClientWire& wire, StreamEnd end, double stall_ms, bool keep_alive,
                                Executed& out) {
  switch (end) {
    case StreamEnd::complete: {
      const bool written = co_await wire.write_last_chunk();
      if (written)
        out.keep_open = keep_alive;
      else
        out.outcome = AttemptOutcome::client_closed;
      break;
    }
    case StreamEnd::stall_then_abort:
      out.outcome = ended_early(co_await wire.wait(stall_ms));
      break;
    case StreamEnd::abort:
      out.outcome = AttemptOutcome::cut;
      break;
  }
}

}  // namespace llmchaos::mock
