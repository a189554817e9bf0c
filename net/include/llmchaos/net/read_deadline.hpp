#pragma once
// A socket's read deadline without a timer operation per read. Beast's tcp_stream arms its timer before
// every read and cancels it after; the cancelled wait is one more handler through the scheduler, so one
// more epoll_wait per read, and on loopback that is most of what a proxy adds to a request
// (bench/README.md, proxy). Here arm() before a read only moves a deadline; one timer sleeps until the
// earliest deadline it has to check, then sleeps again until the one it finds (a read armed meanwhile ends
// no earlier), and parks when no read is armed. When an armed read's deadline passes, the socket's
// operations are cancelled (they end with operation_aborted) and timed_out() says why.
//
// Not thread-safe: arm(), disarm() and the timer run on the socket's executor (one thread, or a strand).
// In namespace llmchaos, not llmchaos::net: files alias boost::asio as `net` inside llmchaos.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <chrono>
#include <memory>

namespace llmchaos {

class ReadDeadline {
 public:
  using Steady = std::chrono::steady_clock;
  explicit ReadDeadline(boost::asio::ip::tcp::socket& socket);
  ReadDeadline(const ReadDeadline&) = delete;
  ReadDeadline& operator=(const ReadDeadline&) = delete;
  ~ReadDeadline();

  // The read that follows must end within `timeout`.
  void arm(Steady::duration timeout);
  // It ended (whatever the outcome).
  void disarm();
  // The last armed read was cancelled because its deadline passed.
  bool timed_out() const;

 private:
  struct State;
  static void watch(const std::shared_ptr<State>& s);
  std::shared_ptr<State> state_;  // shared with the pending wait, which may outlive this object
};

}  // namespace llmchaos
