#pragma once
// One HTTP/1.1 connection: read a request (request_reader.hpp), route it (ServerCore), answer it (its
// answer source, at once, or its plan carried out by execute_plan.hpp), finish its ledger entry, keep or
// close. It is also the ClientWire every answer is written to: one write path (what the socket takes at
// once, write_now: non-blocking, no deadline needed; the rest by a composed write bounded by
// expires_after). Every wait is a timer raced against the client closing. Lives on its own strand (or the
// one I/O thread); cancel() is posted to it.
#include <array>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/buffers_suffix.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <memory>
#include <optional>
#include <string>

#include "llmchaos/mockprovider/forward_hook.hpp"
#include "llmchaos/net/write_now.hpp"
#include "request_reader.hpp"
#include "server_core.hpp"

namespace llmchaos::mock {

class Session : public std::enable_shared_from_this<Session>, public ClientWire {
 public:
  Session(ServerCore& server, boost::asio::ip::tcp::socket socket);
  ~Session() override;
  boost::asio::awaitable<void> run();
  void cancel();  // on the session's strand

  // ClientWire
  boost::asio::any_io_executor executor() override { return timer_.get_executor(); }
  boost::asio::awaitable<WaitEnd> wait(double ms) override;
  boost::asio::awaitable<bool> write_head(int status, const HeaderList& headers, bool chunked,
                                          std::size_t content_length, bool keep_alive) override;
  boost::asio::awaitable<bool> write_chunk(std::string_view bytes) override;
  boost::asio::awaitable<bool> write_head_and_chunk(int status, const HeaderList& headers, bool keep_alive,
                                                    std::string_view first_chunk) override;
  boost::asio::awaitable<bool> write_last_chunk() override;
  boost::asio::awaitable<bool> write_body(std::string_view bytes) override;
  boost::asio::awaitable<bool> write_whole(int status, const HeaderList& headers, std::string_view body,
                                           bool keep_alive) override;
  void reset() override;

 private:
  using ConstBuffer = boost::asio::const_buffer;
  boost::asio::awaitable<void> not_a_request(const ReadResult& got);
  boost::asio::awaitable<Executed> execute(const Plan& plan, bool keep_alive);
  // The write path. send_now: what the socket takes at once; true when nothing is left to write (or it
  // failed, in ec). send_rest: the rest, by a composed write. send: both.
  template <std::size_t N>
  bool send_now(const std::array<ConstBuffer, N>& bufs, std::size_t& sent, boost::system::error_code& ec);
  template <std::size_t N>
  boost::asio::awaitable<boost::system::error_code> send_rest(std::array<ConstBuffer, N> bufs,
                                                              std::size_t sent);
  template <std::size_t N>
  boost::asio::awaitable<bool> send(const std::array<ConstBuffer, N>& bufs);
  // A whole answer Beast's serializer writes (render_plain_head said no).
  template <class Message>
  boost::asio::awaitable<bool> send_by_beast(Message& message, const HeaderList& headers, bool keep_alive);
  Executed plain_written(const Plan& plan, bool keep_alive, boost::system::error_code ec);
  boost::asio::awaitable<void> drain();
  void fail(boost::system::error_code ec, bool write);
  void close();
  void end_session();
  void arm();

  ServerCore& server_;
  boost::beast::tcp_stream stream_;
  RequestReader reader_;
  std::string head_;         // the response head of a plain answer, reused across the connection's requests
  std::string kept_target_;  // what the answer source keeps of a request's target (before_routing)
  boost::asio::steady_timer timer_;
  double idle_ms_;
  bool stopping_ = false;
  std::optional<std::uint64_t> active_seq_;  // finished by the destructor if the frame is torn down
  bool holding_ = false;
};

template <std::size_t N>
bool Session::send_now(const std::array<ConstBuffer, N>& bufs, std::size_t& sent,
                       boost::system::error_code& ec) {
  sent = llmchaos::write_now(stream_.socket(), bufs, ec);
  return ec || sent == boost::asio::buffer_size(bufs);
}

template <std::size_t N>
boost::asio::awaitable<boost::system::error_code> Session::send_rest(std::array<ConstBuffer, N> bufs,
                                                                     std::size_t sent) {
  boost::beast::buffers_suffix<std::array<ConstBuffer, N>> rest(bufs);
  rest.consume(sent);
  arm();
  auto [ec, n] =
      co_await boost::asio::async_write(stream_, rest, boost::asio::as_tuple(boost::asio::use_awaitable));
  co_return ec;
}

template <std::size_t N>
boost::asio::awaitable<bool> Session::send(const std::array<ConstBuffer, N>& bufs) {
  std::size_t sent = 0;
  boost::system::error_code ec;
  if (!send_now(bufs, sent, ec)) ec = co_await send_rest(bufs, sent);
  if (ec) fail(ec, true);
  co_return !ec;
}

}  // namespace llmchaos::mock
