#pragma once
// What the server's rooms share (README.md): the options, the engine and the router, the answer source,
// the registry of live sessions and the one io_context. The listener (listener.cpp) owns it; each session
// (session.hpp) and HTTP/2 host (http2_host.cpp) holds a reference.
#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <optional>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "answer_source.hpp"
#include "llmchaos/core/clock.hpp"
#include "llmchaos/mockprovider/hold_slot.hpp"
#include "llmchaos/mockprovider/router.hpp"
#include "llmchaos/mockprovider/server.hpp"

namespace llmchaos::mock {

class Session;

struct ServerCore {
  explicit ServerCore(ServerOptions o);

  ServerOptions options;
  SteadyClock clock;
  Engine engine;
  Router router;
  std::unique_ptr<AnswerSource> answers;  // the plan's own (the mock), or a forwarder's (a proxy)
  bool serves_http2;  // a connection opening with the h2c preface is HTTP/2's (a forwarder's never are)
  std::mutex mutex;
  std::condition_variable idle_cv;
  std::unordered_map<Session*, std::weak_ptr<Session>> sessions;
  std::atomic<bool> stopping{false};
  std::atomic<std::size_t> holds{0};  // sessions in a WireAction::hold
  // Where an admin extension's requests run (MockServer::set_admin_extension): a handler may block.
  std::optional<boost::asio::thread_pool> blocking;
  bool started = false;
  std::uint16_t port = 0;
  // Declared last: destroyed first, so frames torn down with it still find the engine and the registry.
  // One I/O thread: its own posts skip waking the reactor (an epoll_ctl per completion), and the
  // reactor's per-socket lock is off (UNSAFE_IO: two mutex pairs per request, the start of a read and
  // its completion). Safe because every socket operation then runs on that one thread: sessions,
  // their cancel() and the acceptor's close are posted to it, start() opens the acceptor before the
  // thread runs and stop() touches sockets only after joining it. The scheduler keeps its lock (stop()
  // posts from another thread) and so does the reactor's registration (timers, new sockets).
  boost::asio::io_context ioc{options.threads > 1 ? BOOST_ASIO_CONCURRENCY_HINT_DEFAULT
                                                  : BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO};
  std::optional<boost::asio::ip::tcp::acceptor> acceptor;
  std::vector<std::thread> threads;

  void add(const std::shared_ptr<Session>& s);
  void remove(Session* s);
  std::size_t session_count();

  // The router's plan for a request, built in place; a bug costs one 500 answer, never the server.
  Routed route(RawRequest& req);
  // Whether `req` goes to an admin extension's pool (route_blocking) rather than route().
  bool routes_blocking(const RawRequest& req) const;
  // An admin extension's request, routed on the blocking pool: its handler may wait (for a ledger to
  // settle) while the I/O threads go on serving the attempts it waits for.
  boost::asio::awaitable<Routed> route_blocking(RawRequest& req);
  // A hold takes one of the server's hold slots; with none left `routed` becomes the 503 answer, and the
  // ledger entry says so.
  void take_hold_slot(std::optional<HoldSlot>& slot, Routed& routed, std::string_view target);

  boost::asio::awaitable<void> accept_loop();  // listener.cpp
};

}  // namespace llmchaos::mock
