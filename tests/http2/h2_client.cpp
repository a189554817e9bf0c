// The loopback tests' HTTP/2 client (h2_client.hpp).
#include "h2_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <nghttp2/nghttp2.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <stdexcept>

namespace llmchaos::test {

struct H2Client::Impl {
  H2Client* owner = nullptr;
  int fd = -1;
  nghttp2_session* session = nullptr;
  std::map<std::int32_t, std::string> bodies;  // request bodies, read by the data provider
  std::map<std::int32_t, std::size_t> sent;

  static int on_header(nghttp2_session*, const nghttp2_frame* frame, const std::uint8_t* name,
                       std::size_t namelen, const std::uint8_t* value, std::size_t valuelen, std::uint8_t,
                       void* user) {
    auto& c = *static_cast<Impl*>(user);
    auto& s = c.owner->streams_[frame->hd.stream_id];
    const std::string n(reinterpret_cast<const char*>(name), namelen);
    const std::string v(reinterpret_cast<const char*>(value), valuelen);
    if (n == ":status")
      s.status = std::stoi(v);
    else
      s.headers.emplace_back(n, v);
    return 0;
  }
  static int on_data(nghttp2_session*, std::uint8_t, std::int32_t id, const std::uint8_t* data,
                     std::size_t len, void* user) {
    static_cast<Impl*>(user)->owner->streams_[id].body.append(reinterpret_cast<const char*>(data), len);
    return 0;
  }
  static int on_frame(nghttp2_session*, const nghttp2_frame* frame, void* user) {
    auto& c = *static_cast<Impl*>(user);
    if (frame->hd.type == NGHTTP2_GOAWAY) c.owner->goaway = frame->goaway.error_code;
    if (frame->hd.type == NGHTTP2_RST_STREAM)
      c.owner->streams_[frame->hd.stream_id].reset = frame->rst_stream.error_code;
    return 0;
  }
  static int on_close(nghttp2_session*, std::int32_t id, std::uint32_t, void* user) {
    static_cast<Impl*>(user)->owner->streams_[id].closed = true;
    return 0;
  }
  static ssize_t read_body(nghttp2_session*, std::int32_t id, std::uint8_t* buf, std::size_t length,
                           std::uint32_t* flags, nghttp2_data_source*, void* user) {
    auto& c = *static_cast<Impl*>(user);
    const auto& body = c.bodies[id];
    auto& at = c.sent[id];
    const std::size_t n = std::min(length, body.size() - at);
    std::memcpy(buf, body.data() + at, n);
    at += n;
    if (at == body.size()) *flags |= NGHTTP2_DATA_FLAG_EOF;
    return static_cast<ssize_t>(n);
  }

  void send_all(const char* data, std::size_t n) {
    while (n > 0) {
      const auto w = ::send(fd, data, n, MSG_NOSIGNAL);
      if (w <= 0) return;
      data += w;
      n -= static_cast<std::size_t>(w);
    }
  }
  void flush() {
    for (;;) {
      const std::uint8_t* data = nullptr;
      const auto n = nghttp2_session_mem_send(session, &data);
      if (n <= 0) return;
      send_all(reinterpret_cast<const char*>(data), static_cast<std::size_t>(n));
    }
  }
};

std::string H2Stream::header(const std::string& name) const {
  for (const auto& h : headers)
    if (h.first == name) return h.second;
  return {};
}

H2Client::H2Client(std::uint16_t port) : impl_(new Impl) {
  impl_->owner = this;
  impl_->fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(impl_->fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
    throw std::runtime_error("h2 client: cannot connect");
  nghttp2_session_callbacks* cb = nullptr;
  nghttp2_session_callbacks_new(&cb);
  nghttp2_session_callbacks_set_on_header_callback(cb, &Impl::on_header);
  nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cb, &Impl::on_data);
  nghttp2_session_callbacks_set_on_frame_recv_callback(cb, &Impl::on_frame);
  nghttp2_session_callbacks_set_on_stream_close_callback(cb, &Impl::on_close);
  nghttp2_session_client_new(&impl_->session, cb, impl_);
  nghttp2_session_callbacks_del(cb);
  nghttp2_submit_settings(impl_->session, NGHTTP2_FLAG_NONE, nullptr, 0);
}

H2Client::~H2Client() {
  nghttp2_session_del(impl_->session);
  ::close(impl_->fd);
  delete impl_;
}

std::int32_t H2Client::submit(const std::string& method, const std::string& path, const std::string& body,
                              const Fields& headers) {
  Fields all{{":method", method}, {":scheme", "http"}, {":authority", "127.0.0.1"}};
  if (!path.empty()) all.emplace_back(":path", path);
  all.insert(all.end(), headers.begin(), headers.end());
  std::vector<nghttp2_nv> nva;
  for (auto& h : all)
    nva.push_back({reinterpret_cast<std::uint8_t*>(h.first.data()),
                   reinterpret_cast<std::uint8_t*>(h.second.data()), h.first.size(), h.second.size(),
                   NGHTTP2_NV_FLAG_NONE});
  nghttp2_data_provider provider{};
  provider.read_callback = &Impl::read_body;
  const auto id = nghttp2_submit_request(impl_->session, nullptr, nva.data(), nva.size(),
                                         body.empty() && method == "GET" ? nullptr : &provider, nullptr);
  if (id < 0) throw std::runtime_error("h2 client: submit failed");
  impl_->bodies[id] = body;
  streams_[id];
  return id;
}

void H2Client::send_raw(const std::string& bytes) {
  impl_->flush();
  impl_->send_all(bytes.data(), bytes.size());
}

void H2Client::run(double timeout_ms) {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::duration<double, std::milli>(timeout_ms);
  for (;;) {
    impl_->flush();
    bool open = false;
    for (const auto& [id, s] : streams_) open = open || !s.closed;
    if ((!streams_.empty() && !open) || goaway || server_closed)
      return;  // no stream: until the server ends it
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return;
    pollfd p{impl_->fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char buf[16384];
    const auto n = ::recv(impl_->fd, buf, sizeof buf, 0);
    if (n <= 0) {
      server_closed = true;
      return;
    }
    if (nghttp2_session_mem_recv(impl_->session, reinterpret_cast<std::uint8_t*>(buf),
                                 static_cast<std::size_t>(n)) < 0)
      return;
  }
}

}  // namespace llmchaos::test
