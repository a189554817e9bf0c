// What the server's rooms share (server_core.hpp): the registry of sessions and the routing of a request.
#include "server_core.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "session.hpp"

namespace net = boost::asio;

namespace llmchaos::mock {

ServerCore::ServerCore(ServerOptions o)
    : options(std::move(o)),
      engine(clock, options.time_scale, options.seed),
      router(engine, {options.admin_token, options.forwarder != nullptr, options.forwarder != nullptr}),
      answers(options.forwarder ? make_forwarded_answers(options.forwarder) : make_plan_answers()),
      serves_http2(options.http2 && !options.forwarder) {
  engine.set_ledger_limit(options.ledger_limit);
  engine.set_answers_forwarded(options.forwarder != nullptr);
  engine.set_require_auth(options.require_auth);  // proxy, cassettes: the answers are not the engine's
}

void ServerCore::add(const std::shared_ptr<Session>& s) {
  std::lock_guard lock(mutex);
  sessions.emplace(s.get(), s);
}

void ServerCore::remove(Session* s) {
  std::lock_guard lock(mutex);
  sessions.erase(s);
  if (sessions.empty()) idle_cv.notify_all();
}

std::size_t ServerCore::session_count() {
  std::lock_guard lock(mutex);
  return sessions.size();
}

// Built in place (no move of the plan into a waiting one); the engine reads the request where it lies
// (Router::handle).
Routed ServerCore::route(RawRequest& req) {
  try {
    return router.handle(req);
  } catch (const std::exception&) {  // a bug must cost one answer, never the server
    engine.count_event("internal_error");
    return {json_plan(500, R"({"error":"internal error in the mock provider"})"), {}};
  }
}

bool ServerCore::routes_blocking(const RawRequest& req) const {
  return blocking && router.extended(req.target);
}

net::awaitable<Routed> ServerCore::route_blocking(RawRequest& req) {
  co_return co_await net::co_spawn(
      blocking->get_executor(), [this, &req]() -> net::awaitable<Routed> { co_return route(req); },
      net::use_awaitable);
}

void ServerCore::take_hold_slot(std::optional<HoldSlot>& slot, Routed& routed, std::string_view target) {
  slot.emplace(holds, options.max_held_connections);
  if (slot->taken()) return;
  engine.count_event("hold_limit");
  routed.plan = router.reject(target, 503);
}

}  // namespace llmchaos::mock
