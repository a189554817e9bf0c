#pragma once
// The one interface through which a session meets whatever answers an attempt besides its plan: nothing
// for the mock provider (the plan is the answer, the session carries it out), a Forwarder
// (forward_hook.hpp: `llmchaos proxy`, `serve --cassettes`) for a proxy. The session holds no branch on
// which one it serves.
#include <boost/asio/awaitable.hpp>
#include <memory>
#include <string>
#include <string_view>

#include "llmchaos/mockprovider/engine.hpp"
#include "llmchaos/mockprovider/forward_hook.hpp"
#include "llmchaos/mockprovider/router.hpp"

namespace llmchaos::mock {

class AnswerSource {
 public:
  virtual ~AnswerSource() = default;
  // Called with each request before it is routed: the target may become what the router (and so the
  // ledger) may see; `kept_target` holds the one answer() needs (the session's buffer, reused).
  virtual void before_routing(RawRequest& req, std::string& kept_target) const = 0;
  // Whether answer() carries out this attempt; otherwise the session carries out its plan itself.
  virtual bool answers(const Routed& routed) const = 0;
  virtual boost::asio::awaitable<Executed> answer(ClientWire& client, const RawRequest& req,
                                                  std::string_view kept_target, const Routed& routed,
                                                  bool keep_alive, Engine& engine) = 0;
  // The server has stopped (its threads joined): drop what is kept open between requests.
  virtual void close_idle() {}
};

// The mock provider's: every plan is the session's own to carry out.
std::unique_ptr<AnswerSource> make_plan_answers();
// A proxy's: the plans the forwarder forwards are its own (Forwarder::forwards_plan).
std::unique_ptr<AnswerSource> make_forwarded_answers(std::shared_ptr<Forwarder> forwarder);

}  // namespace llmchaos::mock
