// The one pacing of answers (stream_pacing.hpp), used by the mock's plans and a proxy's deliveries: the
// latency first, each frame's delay, and the three ends of a stream, call by call on a recording wire.
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "llmchaos/mockprovider/stream_pacing.hpp"
#include "recording_wire.hpp"

using namespace llmchaos;
using namespace llmchaos::mock;
using llmchaos::testing::RecordingWire;
using llmchaos::testing::run_to_end;
using Log = std::vector<std::string>;

namespace {

Executed ended(StreamEnd end, Log& log, bool writes_fail = false) {
  boost::asio::io_context ioc;
  RecordingWire wire(ioc.get_executor(), log);
  wire.writes_fail = writes_fail;
  Executed out;
  run_to_end(ioc, end_stream(wire, end, 40, true, out));
  return out;
}

}  // namespace

TEST_CASE("stream pacing: the terminator keeps the connection; a client gone at it is client_closed") {
  Log log;
  const auto out = ended(StreamEnd::complete, log);
  CHECK(log == Log{"last"});
  CHECK(out.keep_open);
  CHECK(out.outcome == AttemptOutcome::completed);
  Log gone_log;
  const auto gone = ended(StreamEnd::complete, gone_log, true);
  CHECK_FALSE(gone.keep_open);
  CHECK(gone.outcome == AttemptOutcome::client_closed);
}

TEST_CASE("stream pacing: an abort is a cut at once; a stall waits stall_ms, then the cut") {
  Log abort_log;
  const auto abort = ended(StreamEnd::abort, abort_log);
  CHECK(abort_log.empty());
  CHECK(abort.outcome == AttemptOutcome::cut);
  CHECK_FALSE(abort.keep_open);
  Log stall_log;
  const auto stall = ended(StreamEnd::stall_then_abort, stall_log);
  CHECK(stall_log == Log{"wait 40"});
  CHECK(stall.outcome == AttemptOutcome::cut);
}

TEST_CASE(
    "stream pacing: the latency is waited only when set; frames wait first_event_ms, then inter_event_ms") {
  Plan plan;
  plan.first_event_ms = 5;
  plan.inter_event_ms = 7;
  CHECK(frame_delay(plan, true) == 5);
  CHECK(frame_delay(plan, false) == 7);
  CHECK(ended_early(WaitEnd::client_closed) == AttemptOutcome::client_closed);
  CHECK(ended_early(WaitEnd::shutdown) == AttemptOutcome::cut);
  for (const double latency : {0.0, 25.0}) {
    plan.latency_ms = latency;
    Log log;
    boost::asio::io_context ioc;
    RecordingWire wire(ioc.get_executor(), log);
    Executed out;
    CHECK(run_to_end(ioc, wait_latency(wire, plan, out)));
    CHECK(log == (latency > 0 ? Log{"wait 25"} : Log{}));
  }
}
