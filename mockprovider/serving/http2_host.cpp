// The HTTP/2 host (http2_host.hpp).
#include "http2_host.hpp"

#include "llmchaos/mockprovider/http2_hook.hpp"

namespace net = boost::asio;

namespace llmchaos::mock {
namespace {

class SessionHttp2Host final : public Http2Host {
 public:
  SessionHttp2Host(ServerCore& server, net::ip::tcp::socket& socket, const RequestReader& reader,
                   const bool& stopping)
      : server_(server), socket_(socket), reader_(reader), stopping_(stopping) {}
  net::ip::tcp::socket& socket() override { return socket_; }
  std::string_view received() const override { return reader_.received(); }
  const ServerOptions& options() const override { return server_.options; }
  Engine& engine() override { return server_.engine; }
  bool stopping() const override { return stopping_; }
  net::awaitable<Routed> route_request(RawRequest& req) override {
    if (server_.routes_blocking(req)) co_return co_await server_.route_blocking(req);
    co_return server_.route(req);
  }
  Plan reject(std::string_view target, int status) const override {
    return server_.router.reject(target, status);
  }
  void take_hold_slot(std::optional<HoldSlot>& slot, Routed& routed, std::string_view target) override {
    server_.take_hold_slot(slot, routed, target);
  }

 private:
  ServerCore& server_;
  net::ip::tcp::socket& socket_;
  const RequestReader& reader_;
  const bool& stopping_;
};

}  // namespace

net::awaitable<void> serve_http2(ServerCore& server, boost::beast::tcp_stream& stream,
                                 const RequestReader& reader, const bool& stopping) {
  stream.expires_never();  // HTTP/2 bounds its own reads and writes
  SessionHttp2Host host(server, stream.socket(), reader, stopping);
  co_await server.options.http2->serve(host);
}

}  // namespace llmchaos::mock
