// The answer source alone (mockprovider/serving/answer_source.hpp): the mock's answers nothing itself; a
// proxy's hands the router a masked target and keeps the one it forwards, and answers exactly the plans
// its forwarder forwards.
#include <catch2/catch.hpp>

#include "answer_source.hpp"

using namespace llmchaos;
using namespace llmchaos::mock;

namespace {

class FakeForwarder final : public Forwarder {
 public:
  bool forwards_plan(const Plan& plan) const override { return plan.status == 200; }
  void mask_ledger_target(std::string& target) const override {
    if (const auto q = target.find('?'); q != std::string::npos)
      target.replace(q, std::string::npos, "?key=***");
  }
  boost::asio::awaitable<Executed> forward(ClientWire&, const ForwardRequest&, const Plan&, bool, Engine&,
                                           std::uint64_t) override {
    co_return Executed{};
  }
};

}  // namespace

TEST_CASE("answer source: the mock's carries out no plan itself and leaves the request as it is") {
  const auto source = make_plan_answers();
  RawRequest req;
  req.target = "/r/v1/x?key=secret";
  std::string kept = "untouched";
  source->before_routing(req, kept);
  CHECK(req.target == "/r/v1/x?key=secret");
  CHECK(kept == "untouched");
  Routed routed{json_plan(200, "{}"), 7};
  CHECK_FALSE(source->answers(routed));
}

TEST_CASE(
    "answer source: a proxy's masks the router's target, keeps the one it forwards, answers its plans") {
  const auto source = make_forwarded_answers(std::make_shared<FakeForwarder>());
  RawRequest req;
  req.target = "/r/v1/x?key=secret";
  std::string kept;
  source->before_routing(req, kept);
  CHECK(req.target == "/r/v1/x?key=***");
  CHECK(kept == "/r/v1/x?key=secret");
  CHECK(source->answers(Routed{json_plan(200, "{}"), 7}));
  CHECK_FALSE(source->answers(Routed{json_plan(429, "{}"), 7}));   // the server's own answer
  CHECK_FALSE(source->answers(Routed{json_plan(200, "{}"), {}}));  // not an attempt (admin, 404)
}
