// ReadDeadline (read_deadline.hpp): one timer per socket, re-armed only when it wakes.
#include "llmchaos/net/read_deadline.hpp"

namespace llmchaos {

struct ReadDeadline::State {
  explicit State(boost::asio::ip::tcp::socket& s) : socket(&s), timer(s.get_executor()) {}
  boost::asio::ip::tcp::socket* socket;  // null once the owner is gone
  boost::asio::steady_timer timer;
  Steady::time_point deadline = Steady::time_point::max();  // max: no read armed
  bool waiting = false;                                     // the timer has a wait pending
  bool timed_out = false;
};

ReadDeadline::ReadDeadline(boost::asio::ip::tcp::socket& socket) : state_(std::make_shared<State>(socket)) {}

ReadDeadline::~ReadDeadline() {
  state_->socket = nullptr;
  state_->timer.cancel();
}

void ReadDeadline::arm(Steady::duration timeout) {
  State& s = *state_;
  s.deadline = Steady::now() + timeout;
  s.timed_out = false;
  if (!s.waiting) {
    watch(state_);
  } else if (s.timer.expiry() > s.deadline) {  // a shorter timeout than the wait's: wake for it
    s.timer.cancel();                          // the cancelled wait sees `waiting` and starts anew
    s.waiting = false;
    watch(state_);
  }
}

void ReadDeadline::disarm() {
  state_->deadline = Steady::time_point::max();
}

bool ReadDeadline::timed_out() const {
  return state_->timed_out;
}

void ReadDeadline::watch(const std::shared_ptr<State>& s) {
  s->waiting = true;
  s->timer.expires_at(s->deadline);
  s->timer.async_wait([s](boost::system::error_code ec) {
    if (ec || !s->socket) return;  // cancelled: by the owner's end, or by a shorter arm()
    s->waiting = false;
    if (s->deadline == Steady::time_point::max()) return;  // no read armed: park until the next arm()
    if (Steady::now() < s->deadline) {                     // a later read was armed meanwhile
      watch(s);
      return;
    }
    s->timed_out = true;
    boost::system::error_code ignore;
    s->socket->cancel(ignore);
  });
}

}  // namespace llmchaos
