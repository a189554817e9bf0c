// The listener: binds, accepts (one session per connection, or a canned 503 over the connection limit)
// and stops; MockServer's public face (server.hpp). stop() cancels every session and returns within a
// second.
#include <fmt/format.h>

#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/detached.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/tcp_stream.hpp>

#include "llmchaos/mockprovider/server.hpp"
#include "server_core.hpp"
#include "session.hpp"

namespace net = boost::asio;
namespace beast = boost::beast;
using tcp = net::ip::tcp;

namespace llmchaos::mock {
namespace {

constexpr auto use_tuple = net::as_tuple(net::use_awaitable);

// The address to bind: an IP address as written, or a host name (`localhost`) resolved, IPv4 first.
net::ip::address bind_address(net::io_context& ioc, const std::string& bind, std::uint16_t port) {
  beast::error_code ec;
  auto address = net::ip::make_address(bind, ec);
  if (!ec) return address;
  // Only what can be a host name is resolved: "300.1.2.3" or "bad address!" is a mistyped address.
  const bool host_name =
      !bind.empty() && bind.find_first_not_of("0123456789.") != std::string::npos &&
      bind.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-.") ==
          std::string::npos;
  if (!host_name) throw std::runtime_error(fmt::format("{}:{}: not an IP address", bind, port));
  tcp::resolver resolver(ioc);
  const auto found = resolver.resolve(bind, "", ec);
  if (ec || found.empty())
    throw std::runtime_error(fmt::format("{}:{}: not an IP address, and not a host name that resolves{}",
                                         bind, port, ec ? ": " + ec.message() : std::string()));
  for (const auto& entry : found)
    if (entry.endpoint().address().is_v4()) return entry.endpoint().address();
  return found.begin()->endpoint().address();
}

std::string host_for_url(const std::string& bind) {
  if (bind == "0.0.0.0") return "127.0.0.1";
  if (bind == "::") return "[::1]";
  if (bind.find(':') != std::string::npos) return "[" + bind + "]";
  return bind;
}

// Over the connection limit: a canned 503, then a short drain so the close does not become an RST that
// destroys the answer. Not a session (nothing to ledger); it ends by itself within its deadline.
net::awaitable<void> reject_connection(tcp::socket socket) {
  static constexpr std::string_view busy =
      "HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\ncontent-length: "
      "33\r\nconnection: "
      "close\r\n\r\n{\"error\":\"too many connections\"}\n";
  beast::tcp_stream stream(std::move(socket));
  stream.expires_after(std::chrono::milliseconds(500));
  auto [ec, n] = co_await net::async_write(stream, net::buffer(busy), use_tuple);
  stream.socket().shutdown(tcp::socket::shutdown_send, ec);
  std::array<char, 4096> sink;
  for (int i = 0; !ec && i < 1024; ++i)
    std::tie(ec, n) = co_await stream.async_read_some(net::buffer(sink), use_tuple);
  stream.socket().close(ec);
}

tcp::acceptor listening_acceptor(ServerCore& core) {
  const auto& o = core.options;
  const auto address = bind_address(core.ioc, o.bind, o.port);
  if (!address.is_loopback() && o.admin_token.empty() && !o.insecure_admin)
    throw std::runtime_error(fmt::format(
        "refusing to bind {}: it is not a loopback address, so the admin API needs a token "
        "(--admin-token-file FILE or LLMCHAOS_ADMIN_TOKEN; --insecure-admin leaves it open to anyone)",
        o.bind));
  beast::error_code ec;
  const tcp::endpoint endpoint{address, o.port};
  tcp::acceptor acceptor(net::make_strand(core.ioc));
  acceptor.open(endpoint.protocol(), ec);
  if (!ec) acceptor.set_option(net::socket_base::reuse_address(true), ec);
  if (!ec) acceptor.bind(endpoint, ec);
  if (!ec) acceptor.listen(net::socket_base::max_listen_connections, ec);
  if (ec) throw std::runtime_error(fmt::format("{}:{}: cannot listen: {}", o.bind, o.port, ec.message()));
  return acceptor;
}

}  // namespace

net::awaitable<void> ServerCore::accept_loop() {
  for (;;) {
    // With one thread the io_context already serialises a session's handlers: a strand would only cost.
    auto executor = options.threads > 1 ? net::any_io_executor(net::make_strand(ioc))
                                        : net::any_io_executor(ioc.get_executor());
    auto [ec, socket] = co_await acceptor->async_accept(executor, use_tuple);
    if (stopping) co_return;
    if (ec) {
      if (ec == net::error::operation_aborted || ec == net::error::bad_descriptor) co_return;
      engine.count_event("accept_error");  // e.g. out of file descriptors: back off briefly
      net::steady_timer pause(acceptor->get_executor(), std::chrono::milliseconds(10));
      co_await pause.async_wait(use_tuple);
      continue;
    }
    if (session_count() >= options.max_connections) {
      engine.count_event("connection_limit");
      auto executor = socket.get_executor();
      net::co_spawn(executor, reject_connection(std::move(socket)), net::detached);
      continue;
    }
    beast::error_code ignore;
    socket.set_option(tcp::no_delay(true), ignore);  // one SSE event per segment, sent at once
    auto session = std::make_shared<Session>(*this, std::move(socket));
    add(session);
    net::co_spawn(session->executor(), session->run(), net::detached);
  }
}

struct MockServer::Impl : ServerCore {
  using ServerCore::ServerCore;
};

MockServer::MockServer(ServerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}

MockServer::~MockServer() {
  stop();
}

void MockServer::start() {
  auto& im = *impl_;
  if (im.started) return;
  auto acceptor = listening_acceptor(im);
  im.port = acceptor.local_endpoint().port();
  im.acceptor.emplace(std::move(acceptor));
  net::co_spawn(im.acceptor->get_executor(), im.accept_loop(), net::detached);
  im.started = true;
  const int n = std::max(1, im.options.threads);
  for (int i = 0; i < n; ++i) im.threads.emplace_back([&im] { im.ioc.run(); });
}

void MockServer::stop() {
  auto& im = *impl_;
  if (!im.started || im.stopping.exchange(true)) return;
  net::post(im.acceptor->get_executor(), [&im] {
    beast::error_code ec;
    im.acceptor->close(ec);
  });
  std::vector<std::shared_ptr<Session>> live;
  {
    std::lock_guard lock(im.mutex);
    for (auto& [p, weak] : im.sessions)
      if (auto s = weak.lock()) live.push_back(std::move(s));
  }
  for (auto& s : live) net::post(s->executor(), [s] { s->cancel(); });
  live.clear();
  {
    // Sessions end as their cancelled operations complete; whatever is left after the grace period is
    // torn down with the io_context (their ledger entries are finished by the session destructor).
    std::unique_lock lock(im.mutex);
    im.idle_cv.wait_for(lock, std::chrono::milliseconds(500), [&] { return im.sessions.empty(); });
  }
  if (im.blocking) im.blocking->join();  // an extension's handler ends on its own (bounded waits)
  im.ioc.stop();
  for (auto& t : im.threads) t.join();
  im.threads.clear();
  im.answers->close_idle();  // a forwarder's sockets belong to this io_context
}

std::uint16_t MockServer::port() const {
  return impl_->port;
}

std::string MockServer::base_url() const {
  const auto& o = impl_->options;
  if (!o.public_url.empty()) return o.public_url;
  // A server on every address is reached, from its own host, on loopback.
  const std::string host = o.bind == "0.0.0.0" ? "127.0.0.1" : o.bind == "::" ? "::1" : o.bind;
  return fmt::format("http://{}:{}", host_for_url(host), impl_->port);
}

Engine& MockServer::engine() {
  return impl_->engine;
}

void MockServer::set_admin_extension(std::shared_ptr<AdminExtension> extension) {
  auto& im = *impl_;
  if (im.started) throw std::logic_error("MockServer::set_admin_extension after start()");
  if (extension && !im.blocking) im.blocking.emplace(2);
  im.router.set_extension(std::move(extension));
}

}  // namespace llmchaos::mock
