#include "one_shot_upstream.hpp"

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/write.hpp>
#include <mutex>
#include <thread>
#include <vector>

#include "llmchaos/core/byte_scan.hpp"

namespace net = boost::asio;
using tcp = net::ip::tcp;

namespace llmchaos::test {

namespace {

// One request off a blocking stream: the head, then the Content-Length body.
template <class SyncStream>
std::string read_one_request(SyncStream& stream, boost::system::error_code& ec) {
  std::string in;
  net::read_until(stream, net::dynamic_buffer(in), "\r\n\r\n", ec);
  if (ec) return in;
  const auto head_end = in.find("\r\n\r\n") + 4;
  auto head = in.substr(0, head_end);
  for (auto& ch : head) ch = byte_scan::ascii_lower(ch);
  std::size_t length = 0;
  if (const auto pos = head.find("\r\ncontent-length:"); pos != std::string::npos)
    length = std::stoul(head.substr(pos + 17));
  while (!ec && in.size() < head_end + length) {
    std::array<char, 4096> buf;
    const auto n = stream.read_some(net::buffer(buf), ec);
    in.append(buf.data(), n);
  }
  return in;
}

}  // namespace

struct OneShotUpstream::Impl {
  net::io_context ioc;
  tcp::acceptor acceptor{ioc, {net::ip::make_address("127.0.0.1"), 0}};
  bool tls = false;
  mutable std::mutex mutex;
  std::string request;
  std::thread thread;

  void keep(std::string r) {
    std::lock_guard lock(mutex);
    request = std::move(r);
  }
};

OneShotUpstream::OneShotUpstream(std::string answer, net::ssl::context* tls)
    : impl_(std::make_unique<Impl>()) {
  impl_->tls = tls != nullptr;
  impl_->thread = std::thread([im = impl_.get(), tls, answer = std::move(answer)] {
    boost::system::error_code ec;
    auto socket = im->acceptor.accept(ec);
    if (ec) return;
    if (!tls) {
      im->keep(read_one_request(socket, ec));
      net::write(socket, net::buffer(answer), ec);
      socket.shutdown(tcp::socket::shutdown_both, ec);
      return;
    }
    net::ssl::stream<tcp::socket> stream(std::move(socket), *tls);
    stream.handshake(net::ssl::stream_base::server, ec);
    if (ec) return;
    im->keep(read_one_request(stream, ec));
    net::write(stream, net::buffer(answer), ec);
    stream.shutdown(ec);
  });
}

OneShotUpstream::~OneShotUpstream() {
  boost::system::error_code ec;
  impl_->acceptor.close(ec);
  if (impl_->thread.joinable()) impl_->thread.join();
}

std::string OneShotUpstream::base_url() const {
  return fmt::format("{}://127.0.0.1:{}", impl_->tls ? "https" : "http",
                     impl_->acceptor.local_endpoint().port());
}

std::string OneShotUpstream::request() const {
  std::lock_guard lock(impl_->mutex);
  return impl_->request;
}

struct LingeringUpstream::Impl {
  std::string answer;  // set before any thread starts, read by all
  net::io_context ioc;
  tcp::acceptor acceptor{ioc, {net::ip::make_address("127.0.0.1"), 0}};
  std::atomic<int> connections{0}, ignored{0};
  std::atomic<bool> stopping{false};
  std::thread accepting;
  std::mutex mutex;
  std::vector<std::thread> lingering;

  void serve(tcp::socket socket) {
    boost::system::error_code ec;
    read_one_request(socket, ec);
    if (ec) return;
    // Corked, the answer and the FIN leave in one segment.
    const int one = 1;
    ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_CORK, &one, sizeof one);
    net::write(socket, net::buffer(answer), ec);
    socket.shutdown(tcp::socket::shutdown_send, ec);
    // Reads and drops until the peer closes, a bounded wait so the destructor's join ends.
    socket.non_blocking(true, ec);
    std::array<char, 4096> buf;
    for (int waited = 0; waited < 500 && !stopping; ++waited) {
      const auto n = socket.read_some(net::buffer(buf), ec);
      if (ec == net::error::would_block) {
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
        continue;
      }
      if (ec) return;
      if (n > 0) ++ignored;
    }
  }
};

LingeringUpstream::LingeringUpstream(std::string answer) : impl_(std::make_unique<Impl>()) {
  impl_->answer = std::move(answer);
  impl_->accepting = std::thread([im = impl_.get()] {
    for (;;) {
      boost::system::error_code ec;
      auto socket = im->acceptor.accept(ec);
      if (ec || im->stopping) return;
      ++im->connections;
      std::lock_guard lock(im->mutex);
      im->lingering.emplace_back([im, s = std::move(socket)]() mutable { im->serve(std::move(s)); });
    }
  });
}

LingeringUpstream::~LingeringUpstream() {
  impl_->stopping = true;
  boost::system::error_code ec;
  impl_->acceptor.cancel(ec);
  // Wakes a blocking accept: a connection the loop sees after `stopping` is set.
  tcp::socket poke(impl_->ioc);
  poke.connect(impl_->acceptor.local_endpoint(), ec);
  impl_->accepting.join();
  impl_->acceptor.close(ec);
  std::lock_guard lock(impl_->mutex);
  for (auto& t : impl_->lingering) t.join();
}

std::string LingeringUpstream::base_url() const {
  return fmt::format("http://127.0.0.1:{}", impl_->acceptor.local_endpoint().port());
}

int LingeringUpstream::connections() const {
  return impl_->connections;
}
int LingeringUpstream::ignored() const {
  return impl_->ignored;
}

}  // namespace llmchaos::test
