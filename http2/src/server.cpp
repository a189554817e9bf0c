// make_http2_server (http2.hpp): one Connection per connection handed over by the mock's session.
#include <memory>

#include "connection.hpp"
#include "llmchaos/http2/http2.hpp"

namespace llmchaos::http2 {
namespace {

class Server final : public mock::Http2Server {
 public:
  boost::asio::awaitable<void> serve(mock::Http2Host& host) override {
    auto connection = std::make_shared<Connection>(host);
    co_await connection->run();
  }
};

}  // namespace

std::shared_ptr<mock::Http2Server> make_http2_server() {
  return std::make_shared<Server>();
}

}  // namespace llmchaos::http2
