// A forwarded stream's head (proxy/src/answer_delivery.hpp, deliver_stream), call by call on a recording
// wire: when the first frames came with the upstream's head, the head goes out with the first of them in
// one write; it never waits on the upstream (it is written before any read that may block) nor behind a
// first-event delay.
#include <boost/asio/io_context.hpp>
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "answer_delivery.hpp"
#include "recording_wire.hpp"

using llmchaos::mock::Plan;
using llmchaos::proxy::detail::AnswerHead;
using llmchaos::proxy::detail::Exchange;
using llmchaos::testing::RecordingWire;
using llmchaos::testing::run_to_end;
using Log = std::vector<std::string>;

namespace {

const std::string first_frame = R"(data: {"choices":[{"index":0,"delta":{"content":"one"}}]})"
                                "\n\n";
const std::string second_frame = R"(data: {"choices":[{"index":0,"delta":{"content":"two"}}]})"
                                 "\n\n";
const std::string done_frame = "data: [DONE]\n\n";

// The upstream's body in pieces: the first in hand with the head (or not), each later one a read that
// may wait (logged as "upstream read").
struct PiecesSource {
  std::vector<std::string> pieces;
  bool first_in_hand;
  Log& log;
  bool body_in_hand() const { return first_in_hand; }
  template <class Take>
  boost::asio::awaitable<bool> read(Take take) {
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      if (i > 0 || !first_in_hand) log.push_back("upstream read");
      if (!co_await take(pieces[i])) co_return false;
    }
    co_return true;
  }
};

Plan passing_plan(double first_event_ms = 0) {
  Plan plan;
  plan.streamed = true;
  plan.passes_upstream_stream = true;
  plan.first_event_ms = first_event_ms;
  return plan;
}

// Delivers the pieces under the plan; returns the events counted.
int deliver(const Plan& plan, std::vector<std::string> pieces, bool first_in_hand, Log& log) {
  boost::asio::io_context ioc;
  RecordingWire wire(ioc.get_executor(), log);
  Exchange x{wire, plan, true};
  AnswerHead head{200, {{"content-type", "text/event-stream"}}, true, std::nullopt};
  PiecesSource source{std::move(pieces), first_in_hand, log};
  run_to_end(ioc, llmchaos::proxy::detail::deliver_stream(x, head, source, llmchaos::Dialect::openai));
  CHECK(x.out.status == 200);
  return x.out.events;
}

}  // namespace

TEST_CASE("frames that came with the head: the head and the first frame in one write") {
  Log log;
  const int events = deliver(passing_plan(), {first_frame + second_frame, done_frame}, true, log);
  CHECK(log == Log{"head+chunk " + first_frame, "chunk " + second_frame, "upstream read",
                   "chunk " + done_frame, "last"});
  CHECK(events == 2);
}

TEST_CASE("a head that came alone is written before the upstream is read") {
  Log log;
  const int events = deliver(passing_plan(), {first_frame, second_frame + done_frame}, false, log);
  CHECK(log == Log{"head 200 chunked", "upstream read", "chunk " + first_frame, "upstream read",
                   "chunk " + second_frame, "chunk " + done_frame, "last"});
  CHECK(events == 2);
}

TEST_CASE("a partial first frame with the head: the head goes before the read that completes it") {
  Log log;
  const auto cut = first_frame.size() / 2;
  deliver(passing_plan(), {first_frame.substr(0, cut), first_frame.substr(cut) + done_frame}, true, log);
  CHECK(log ==
        Log{"head 200 chunked", "upstream read", "chunk " + first_frame, "chunk " + done_frame, "last"});
}

TEST_CASE("a first-event delay: the head first, then the wait, then the frame") {
  Log log;
  deliver(passing_plan(30), {first_frame + done_frame}, true, log);
  CHECK(log == Log{"head 200 chunked", "wait 30", "chunk " + first_frame, "chunk " + done_frame, "last"});
}

TEST_CASE("an upstream that ends with no frame: the head alone, then the end") {
  Log log;
  deliver(passing_plan(), {"\n"}, true, log);
  CHECK(log.front() == "head 200 chunked");
  CHECK(log.back() == "last");
}
