// A plan carried out on a ClientWire (execute_plan.hpp): the one order HTTP/1.1 and HTTP/2 share.
#include "llmchaos/mockprovider/execute_plan.hpp"

#include <algorithm>
#include <string_view>

#include "llmchaos/mockprovider/stream_pacing.hpp"

namespace net = boost::asio;

namespace llmchaos::mock {
namespace {

// A plain answer: whole, or (end != complete) its head announcing the whole body, body_cut_at bytes of
// it, then (stall_then_abort) silence, then the cut.
net::awaitable<Executed> respond_plain(ClientWire& wire, const Plan& plan, bool keep_alive) {
  Executed out;
  if (plan.end == StreamEnd::complete) {
    if (!co_await wire.write_whole(plan.status, plan.headers, plan.body, keep_alive)) {
      out.outcome = AttemptOutcome::client_closed;
      co_return out;
    }
    out.status = plan.status;
    out.keep_open = keep_alive;
    co_return out;
  }
  out.outcome = AttemptOutcome::cut;
  bool written = co_await wire.write_head(plan.status, plan.headers, false, plan.body.size(), keep_alive);
  if (written) {
    out.status = plan.status;
    written = co_await wire.write_body(
        std::string_view(plan.body.data(), std::min(plan.body_cut_at, plan.body.size())));
  }
  if (written) co_await end_stream(wire, plan.end, plan.stall_ms, keep_alive, out);
  wire.cut();
  co_return out;
}

// The pacing of a streamed answer: each frame from `first` on after its delay, one write per frame, then
// the plan's end.
net::awaitable<Executed> play_frames(ClientWire& wire, const Plan& plan, Executed out, bool keep_alive,
                                     std::size_t first) {
  for (std::size_t i = first; i < plan.frames.size(); ++i) {
    const double delay = frame_delay(plan, i == 0);
    if (delay > 0) {
      const auto w = co_await wire.wait(delay);
      if (w != WaitEnd::elapsed) {
        out.outcome = ended_early(w);
        co_return out;
      }
    }
    if (!co_await wire.write_chunk(plan.frames[i].bytes)) {
      out.outcome = AttemptOutcome::client_closed;
      co_return out;
    }
    if (plan.frames[i].content) ++out.events;
  }
  co_await end_stream(wire, plan.end, plan.stall_ms, keep_alive, out);
  if (out.outcome == AttemptOutcome::cut) wire.cut();
  co_return out;
}

// A first frame due at once goes out with the head, in one write (the client wakes once for both).
net::awaitable<Executed> respond_stream(ClientWire& wire, const Plan& plan, bool keep_alive) {
  Executed out;
  const bool first_with_head =
      !plan.frames.empty() && !plan.frames[0].bytes.empty() && !(plan.first_event_ms > 0);
  bool written = false;
  if (first_with_head)  // no co_await inside ?: (GCC 12: DEVELOPERS.md)
    written = co_await wire.write_head_and_chunk(plan.status, plan.headers, keep_alive, plan.frames[0].bytes);
  else
    written = co_await wire.write_head(plan.status, plan.headers, true, 0, keep_alive);
  if (!written) {
    out.outcome = AttemptOutcome::client_closed;
    co_return out;
  }
  out.status = plan.status;
  if (first_with_head && plan.frames[0].content) ++out.events;
  co_return co_await play_frames(wire, plan, out, keep_alive, first_with_head ? 1 : 0);
}

}  // namespace

net::awaitable<bool> write_head_then_chunk(ClientWire& wire, int status, const HeaderList& headers,
                                           bool keep_alive, std::string_view first_chunk) {
  // Each result in a variable: the other shape is miscompiled by GCC 12 here (DEVELOPERS.md).
  const bool head = co_await wire.write_head(status, headers, true, 0, keep_alive);
  if (!head) co_return false;
  const bool chunk = co_await wire.write_chunk(first_chunk);
  co_return chunk;
}

net::awaitable<bool> ClientWire::write_head_and_chunk(int status, const HeaderList& headers, bool keep_alive,
                                                      std::string_view first_chunk) {
  return write_head_then_chunk(*this, status, headers, keep_alive, first_chunk);
}

net::awaitable<Executed> execute_plan(ClientWire& wire, const Plan& plan, bool keep_alive) {
  Executed out;
  switch (plan.action) {
    case WireAction::reset_after_head:
      wire.reset();
      out.outcome = AttemptOutcome::reset;
      co_return out;
    case WireAction::hold:
      co_await wire.wait(plan.hold_ms);  // ends on hold_ms, a client close or shutdown: all end the answer
      out.outcome = AttemptOutcome::held_then_closed;
      co_return out;
    case WireAction::respond:
      break;
  }
  const bool waited = co_await wait_latency(wire, plan, out);
  if (!waited) co_return out;
  // No co_await inside ?: (GCC 12: DEVELOPERS.md).
  if (plan.streamed) co_return co_await respond_stream(wire, plan, keep_alive);
  co_return co_await respond_plain(wire, plan, keep_alive);
}

}  // namespace llmchaos::mock
