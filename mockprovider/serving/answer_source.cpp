// The mock's and a proxy's AnswerSource (answer_source.hpp).
#include "answer_source.hpp"

#include "llmchaos/core/sized_text.hpp"

namespace llmchaos::mock {
namespace {

class PlanAnswers final : public AnswerSource {
 public:
  void before_routing(RawRequest&, std::string&) const override {}
  bool answers(const Routed&) const override { return false; }
  boost::asio::awaitable<Executed> answer(ClientWire&, const RawRequest&, std::string_view, const Routed&,
                                          bool, Engine&) override {
    co_return Executed{};  // never asked: answers() is false
  }
};

class ForwardedAnswers final : public AnswerSource {
 public:
  explicit ForwardedAnswers(std::shared_ptr<Forwarder> forwarder) : forwarder_(std::move(forwarder)) {}
  // The target as it came is kept, to forward it; the router (and so the ledger) never sees a key. The
  // rest of the request is forwarded from the session's own buffers (ForwardRequest's views).
  void before_routing(RawRequest& req, std::string& kept_target) const override {
    assign_reusing(kept_target, req.target);
    forwarder_->mask_ledger_target(req.target);
  }
  bool answers(const Routed& routed) const override {
    return routed.seq && forwarder_->forwards_plan(routed.plan);
  }
  boost::asio::awaitable<Executed> answer(ClientWire& client, const RawRequest& req,
                                          std::string_view kept_target, const Routed& routed, bool keep_alive,
                                          Engine& engine) override {
    const ForwardRequest forward{req.method, kept_target,  req.headers, req.body,
                                 routed.ns,  routed.route, routed.path};
    // A coroutine of its own: `forward` must live in a frame while the forwarder's coroutine runs.
    co_return co_await forwarder_->forward(client, forward, routed.plan, keep_alive, engine, *routed.seq);
  }
  void close_idle() override { forwarder_->close_idle(); }

 private:
  std::shared_ptr<Forwarder> forwarder_;
};

}  // namespace

std::unique_ptr<AnswerSource> make_plan_answers() {
  return std::make_unique<PlanAnswers>();
}

std::unique_ptr<AnswerSource> make_forwarded_answers(std::shared_ptr<Forwarder> forwarder) {
  return std::make_unique<ForwardedAnswers>(std::move(forwarder));
}

}  // namespace llmchaos::mock
