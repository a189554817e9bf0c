// A streamed plan's head and first frame (execute_plan.cpp): due at once, they go out in one write
// (write_head_and_chunk); after a first-event delay, the head goes first, then the wait, then the frame.
// Call by call on a recording wire (tests/mockprovider/wire/recording_wire.hpp).
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "llmchaos/mockprovider/execute_plan.hpp"
#include "recording_wire.hpp"

using llmchaos::mock::Executed;
using llmchaos::mock::Plan;
using llmchaos::testing::RecordingWire;
using llmchaos::testing::run_to_end;
using Log = std::vector<std::string>;

namespace {

Plan three_frames() {
  Plan plan;
  plan.streamed = true;
  plan.headers = {{"content-type", "text/event-stream"}};
  plan.frames = {{"data: a\n\n", true}, {"data: b\n\n", true}, {"data: [DONE]\n\n", false}};
  return plan;
}

Executed execute(const Plan& plan, Log& log, bool one_write = true, bool writes_fail = false) {
  boost::asio::io_context ioc;
  RecordingWire wire(ioc.get_executor(), log);
  wire.one_write_head_and_chunk = one_write;
  wire.writes_fail = writes_fail;
  return run_to_end(ioc, llmchaos::mock::execute_plan(wire, plan, true));
}

}  // namespace

TEST_CASE("a first frame due at once goes out with the head, in one write") {
  Log log;
  const auto out = execute(three_frames(), log);
  CHECK(log == Log{"head+chunk data: a\n\n", "chunk data: b\n\n", "chunk data: [DONE]\n\n", "last"});
  CHECK(out.events == 2);
  CHECK(out.status == 200);
  CHECK(out.keep_open);
}

TEST_CASE("after a first-event delay the head goes first, then the wait, then the frame") {
  Plan plan = three_frames();
  plan.first_event_ms = 30;
  plan.inter_event_ms = 5;
  Log log;
  const auto out = execute(plan, log);
  CHECK(log == Log{"head 200 chunked", "wait 30", "chunk data: a\n\n", "wait 5", "chunk data: b\n\n",
                   "wait 5", "chunk data: [DONE]\n\n", "last"});
  CHECK(out.events == 2);
}

TEST_CASE("a wire that cannot join them writes the head, then the chunk (ClientWire's default)") {
  Log log;
  const auto out = execute(three_frames(), log, false);
  CHECK(log ==
        Log{"head 200 chunked", "chunk data: a\n\n", "chunk data: b\n\n", "chunk data: [DONE]\n\n", "last"});
  CHECK(out.events == 2);
}

TEST_CASE("a client gone at the head and first frame counts no event") {
  Log log;
  const auto out = execute(three_frames(), log, true, true);
  CHECK(log == Log{"head+chunk data: a\n\n"});
  CHECK(out.outcome == llmchaos::AttemptOutcome::client_closed);
  CHECK(out.events == 0);
}

TEST_CASE("a stream with no frame writes its head alone") {
  Plan plan = three_frames();
  plan.frames.clear();
  Log log;
  execute(plan, log);
  CHECK(log == Log{"head 200 chunked", "last"});
}
