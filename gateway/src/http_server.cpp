#include "http_server.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

namespace llmchaos::gateway {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using tcp = asio::ip::tcp;

std::string_view Request::header(std::string_view name) const {
  const auto it = std::find_if(headers.begin(), headers.end(),
                               [&](const auto& field) { return beast::iequals(field.first, name); });
  return it == headers.end() ? std::string_view() : std::string_view(it->second);
}

std::string_view Request::path() const {
  return std::string_view(target).substr(0, target.find('?'));
}

namespace {

template <class Message>
void set_common(Message& h, int status, bool keep_alive) {
  h.result(static_cast<unsigned>(status));
  h.version(11);
  h.set(http::field::server, "llmchaos-gateway");
  h.keep_alive(keep_alive);
}

// One client's socket; a client that left is no error of ours (every later write is skipped).
class Connection final : public Responder {
 public:
  Connection(tcp::socket& socket, bool keep_alive) : socket_(socket), keep_alive_(keep_alive) {}

  void reply(const Reply& r) override {
    http::response<http::string_body> res;
    set_common(res, r.status, keep_alive_);
    res.set(http::field::content_type, r.content_type);
    for (const auto& [k, v] : r.headers) res.set(k, v);
    res.body() = r.body;
    res.prepare_payload();
    beast::error_code ec;
    http::write(socket_, res, ec);
    broken_ = broken_ || ec;
  }
  void start_stream(const HeaderList& headers) override {
    http::response<http::empty_body> res;
    set_common(res, 200, keep_alive_);
    res.set(http::field::content_type, "text/event-stream");
    res.set(http::field::cache_control, "no-cache");
    for (const auto& [k, v] : headers) res.set(k, v);
    res.chunked(true);
    http::response_serializer<http::empty_body> sr(res);
    beast::error_code ec;
    http::write_header(socket_, sr, ec);
    broken_ = broken_ || ec;
    started_ = true;
  }
  void send(std::string_view frame) override {
    if (broken_ || frame.empty()) return;
    beast::error_code ec;
    asio::write(socket_, http::make_chunk(asio::buffer(frame.data(), frame.size())), ec);
    broken_ = broken_ || ec;
  }
  void end_stream() override {
    if (broken_) return;
    beast::error_code ec;
    asio::write(socket_, http::make_chunk_last(), ec);
    broken_ = broken_ || ec;
  }
  bool stream_started() const override { return started_; }
  bool broken() const override { return broken_; }

 private:
  tcp::socket& socket_;
  bool keep_alive_;
  bool started_ = false;
  bool broken_ = false;
};

Request plain_request(http::request<http::string_body>&& req) {
  Request out;
  out.method = std::string(req.method_string());
  out.target = std::string(req.target());
  out.keep_alive = req.keep_alive();
  for (const auto& field : req) out.headers.emplace_back(field.name_string(), field.value());
  out.body = std::move(req.body());
  return out;
}

}  // namespace

struct HttpServer::State {
  State(Handler h, ServerReplies r, ServerLimits l)
      : handler(std::move(h)), replies(std::move(r)), limits(l) {}

  void accept_loop(const std::shared_ptr<State>& self);
  void serve_connection(std::shared_ptr<tcp::socket> socket);

  Handler handler;
  ServerReplies replies;
  ServerLimits limits;
  asio::io_context ioc;  // owns the sockets; never run (every operation is blocking)
  std::optional<tcp::acceptor> acceptor;
  std::thread accept_thread;
  std::atomic<bool> stopping{false};
  std::mutex conn_mutex;
  std::condition_variable conn_cv;
  std::map<tcp::socket*, std::shared_ptr<tcp::socket>> connections;
  std::uint16_t bound_port = 0;
};

void HttpServer::State::accept_loop(const std::shared_ptr<State>& self) {
  while (!stopping) {
    pollfd pfd{acceptor->native_handle(), POLLIN, 0};
    if (::poll(&pfd, 1, 100) <= 0) continue;  // 100 ms: stop() is noticed within that
    auto socket = std::make_shared<tcp::socket>(ioc);
    beast::error_code ec;
    acceptor->accept(*socket, ec);
    if (ec) continue;
    {
      std::lock_guard lock(conn_mutex);
      if (stopping || connections.size() >= limits.max_connections) {
        Connection(*socket, false).reply(replies.overloaded);
        socket->close(ec);
        continue;
      }
      connections.emplace(socket.get(), socket);
    }
    // Detached: a thread stuck in an upstream call must not block stop(); it holds the state alive.
    std::thread([self, socket] { self->serve_connection(socket); }).detach();
  }
}

void HttpServer::State::serve_connection(std::shared_ptr<tcp::socket> socket) {
  beast::flat_buffer buffer;
  for (;;) {
    http::request_parser<http::string_body> parser;
    parser.body_limit(limits.body_limit);
    parser.header_limit(static_cast<std::uint32_t>(limits.header_limit));
    beast::error_code ec;
    http::read(*socket, buffer, parser, ec);
    if (ec == http::error::body_limit || ec == http::error::header_limit) {
      Connection(*socket, false).reply(replies.too_large);
      break;
    }
    if (ec || stopping) break;
    const Request request = plain_request(parser.release());
    Connection connection(*socket, request.keep_alive);
    if (!handler(request, connection) || stopping) break;
  }
  beast::error_code ec;
  socket->shutdown(tcp::socket::shutdown_both, ec);
  socket->close(ec);
  std::lock_guard lock(conn_mutex);
  connections.erase(socket.get());
  conn_cv.notify_all();
}

HttpServer::HttpServer(Handler handler, ServerReplies replies, ServerLimits limits)
    : state_(std::make_shared<State>(std::move(handler), std::move(replies), limits)) {}

HttpServer::~HttpServer() {
  stop();
}

void HttpServer::start(const std::string& bind, std::uint16_t port) {
  auto& s = *state_;
  beast::error_code ec;
  const auto address = asio::ip::make_address(bind, ec);
  if (ec) throw std::runtime_error(fmt::format("gateway: bind address \"{}\": {}", bind, ec.message()));
  s.acceptor.emplace(s.ioc);
  const tcp::endpoint ep(address, port);
  s.acceptor->open(ep.protocol(), ec);
  if (!ec) s.acceptor->set_option(asio::socket_base::reuse_address(true), ec);
  if (!ec) s.acceptor->bind(ep, ec);
  if (!ec) s.acceptor->listen(asio::socket_base::max_listen_connections, ec);
  if (ec)
    throw std::runtime_error(fmt::format("gateway: cannot listen on {}:{}: {}", bind, port, ec.message()));
  s.bound_port = s.acceptor->local_endpoint().port();
  s.accept_thread = std::thread([state = state_] { state->accept_loop(state); });
}

bool HttpServer::stop() {
  auto& s = *state_;
  if (s.stopping.exchange(true)) return true;
  if (s.accept_thread.joinable()) s.accept_thread.join();
  beast::error_code ec;
  if (s.acceptor) s.acceptor->close(ec);
  std::unique_lock lock(s.conn_mutex);
  // shutdown() wakes a thread blocked reading its connection; one inside an upstream call ends with it.
  for (auto& [raw, socket] : s.connections) ::shutdown(socket->native_handle(), SHUT_RDWR);
  return s.conn_cv.wait_for(lock, std::chrono::milliseconds(900), [&] { return s.connections.empty(); });
}

std::uint16_t HttpServer::port() const {
  return state_->bound_port;
}

}  // namespace llmchaos::gateway
