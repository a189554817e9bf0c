#pragma once
// async_read_some without the recv that comes back empty. Asio's reactor starts every read with a
// speculative recv and waits for epoll only when that finds nothing; it skips the recv only after a read
// that saw the end of the stream. nginx reads until a recv returns less than it asked for, then waits for
// the next edge-triggered event, unless the peer's FIN is already queued behind those bytes: the FIN raised
// no event of its own, so nothing would wake the wait. nginx knows that from EPOLLRDHUP in the event that
// brought the bytes (its pending_eof). So does this reader:
// - it adds EPOLLRDHUP to the socket's epoll registration once (Asio registers without it);
// - a read that returns less than its buffer counts as draining the socket, unless the last events epoll
//   reported for the socket include EPOLLRDHUP; then the next read starts with a recv and sees the end.
// Why that is enough: epoll reports a socket's state as it is when epoll_wait takes the event, so a FIN that
// came before that has its EPOLLRDHUP in those events, and one that comes after raises a new event, which
// makes the reactor try the socket first again. A reactor that holds several events for a socket keeps
// them all (add_ready_events).
//
// Only on a reactor that one thread runs (an io_context made with BOOST_ASIO_CONCURRENCY_HINT_UNSAFE_IO, as
// serve's and the proxy's with one I/O thread): the reactor stores a descriptor's events without a lock,
// so a read of them on another thread would race with it. Elsewhere the reader is the plain read.
//
// For a client that sends one request at a time (an SDK) and for the proxy's upstream connections, the
// recv before each wait is one system call per read that returns nothing (bench/README.md, proxy).
//
// The reactor's interface used here (epoll_reactor::start_op, its per-descriptor data and their private
// members, reactor_op) is Asio's detail namespace, so the trick is compiled only for the Asio it was
// written against (Boost 1.81, epoll); anywhere else DrainedReader is socket.async_read_some, and so is a
// reader on a reactor with its locks on, or whose socket's registration could not be changed.
// tests/net/test_drained_read.cpp holds it to the plain read.
//
// In namespace llmchaos, not llmchaos::net: files alias boost::asio as `net` inside llmchaos.
#include <boost/asio/async_result.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/version.hpp>
#include <cstddef>
#include <utility>

#if defined(BOOST_ASIO_HAS_EPOLL) && !defined(BOOST_ASIO_HAS_IO_URING_AS_DEFAULT) && BOOST_VERSION == 108100
#define LLMCHAOS_DRAINED_READ 1
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/detail/bind_handler.hpp>
#include <boost/asio/detail/fenced_block.hpp>
#include <boost/asio/detail/handler_alloc_helpers.hpp>
#include <boost/asio/detail/handler_cont_helpers.hpp>
#include <boost/asio/detail/handler_work.hpp>
#include <boost/asio/detail/reactor.hpp>
#include <boost/asio/detail/reactor_op.hpp>
#include <boost/asio/detail/socket_ops.hpp>
#endif

namespace llmchaos {

namespace drained_read_detail {
#ifdef LLMCHAOS_DRAINED_READ
namespace ad = boost::asio::detail;
using Socket = boost::asio::ip::tcp::socket;
using Descriptor = ad::epoll_reactor::descriptor_state;

// The reactor's registration of the socket gets EPOLLRDHUP (one epoll_ctl); false when it cannot, or
// when the descriptor's lock is on (several threads may run the reactor).
bool watch_peer_close(ad::epoll_reactor& reactor, Descriptor* descriptor, int socket);
// Whether the events epoll last reported for the descriptor include the peer's FIN (EPOLLRDHUP); read by
// perform, on the one thread that runs the reactor.
bool peer_close_reported(const Descriptor* descriptor);

// basic_socket keeps its implementation protected; a pointer to that member formed through a derived
// class may be applied to any socket of the base type.
struct ImplAccess : Socket {
  static auto& of(Socket& socket) { return socket.*(&ImplAccess::impl_); }
};

// A recv operation as Asio's own (reactive_socket_recv_op), but a short read counts as exhausting the
// socket when no FIN may be queued behind its bytes (the reader watches for the peer's close, and the
// socket's last events do not say it came).
template <class Handler, class IoExecutor>
class RecvOp : public ad::reactor_op {
 public:
  BOOST_ASIO_DEFINE_HANDLER_PTR(RecvOp);

  RecvOp(ad::socket_type socket, const Descriptor* descriptor, bool watches_close,
         boost::asio::mutable_buffer buffer, Handler& handler, const IoExecutor& io_ex)
      : ad::reactor_op(boost::system::error_code(), &RecvOp::do_perform, &RecvOp::do_complete),
        socket_(socket),
        descriptor_(descriptor),
        watches_close_(watches_close),
        buffer_(buffer),
        handler_(std::move(handler)),
        work_(handler_, io_ex) {}

  static status do_perform(ad::reactor_op* base) {
    auto* o = static_cast<RecvOp*>(base);
    if (!ad::socket_ops::non_blocking_recv1(o->socket_, o->buffer_.data(), o->buffer_.size(), 0, true, o->ec_,
                                            o->bytes_transferred_))
      return not_done;
    // As Asio's: a read of nothing (the end of the stream, an error) leaves nothing to read. Less than
    // asked for has emptied the receive queue, but for a FIN that may be queued behind the bytes.
    if (o->bytes_transferred_ == 0) return done_and_exhausted;
    const bool drained = o->watches_close_ && o->bytes_transferred_ < o->buffer_.size() &&
                         !peer_close_reported(o->descriptor_);
    return drained ? done_and_exhausted : done;
  }

  // As reactive_socket_recv_op::do_complete: the memory is freed before the upcall; no upcall on shutdown.
  static void do_complete(void* owner, ad::operation* base, const boost::system::error_code&, std::size_t) {
    auto* o = static_cast<RecvOp*>(base);
    ptr p = {std::addressof(o->handler_), o, o};
    ad::handler_work<Handler, IoExecutor> w(std::move(o->work_));
    ad::binder2<Handler, boost::system::error_code, std::size_t> handler(o->handler_, o->ec_,
                                                                         o->bytes_transferred_);
    p.h = std::addressof(handler.handler_);
    p.reset();
    if (owner) {
      ad::fenced_block b(ad::fenced_block::half);
      w.complete(handler, handler.handler_);
    }
  }

 private:
  ad::socket_type socket_;
  const Descriptor* descriptor_;
  bool watches_close_;
  boost::asio::mutable_buffer buffer_;
  Handler handler_;
  ad::handler_work<Handler, IoExecutor> work_;
};

// Per-operation cancellation (an awaitable `||`, a cancellation slot), as Asio's reactor_op_cancellation.
class Cancellation {
 public:
  Cancellation(ad::reactor* reactor, ad::reactor::per_descriptor_data* data, int socket)
      : reactor_(reactor), data_(data), socket_(socket) {}
  void operator()(boost::asio::cancellation_type_t type) {
    using ct = boost::asio::cancellation_type;
    if (!!(type & (ct::terminal | ct::partial | ct::total)))
      reactor_->cancel_ops_by_key(socket_, *data_, ad::reactor::read_op, this);
  }

 private:
  ad::reactor* reactor_;
  ad::reactor::per_descriptor_data* data_;
  int socket_;
};

struct Initiate {
  Socket* socket;
  ad::reactor* reactor;
  bool watches_close;

  using executor_type = Socket::executor_type;
  executor_type get_executor() const noexcept { return socket->get_executor(); }

  template <class Handler>
  void operator()(Handler&& handler, boost::asio::mutable_buffer buffer) const {
    using H = std::decay_t<Handler>;
    using Op = RecvOp<H, executor_type>;
    H h(std::forward<Handler>(handler));
    auto& impl = ImplAccess::of(*socket).get_implementation();
    const bool is_continuation = boost_asio_handler_cont_helpers::is_continuation(h);
    auto slot = boost::asio::get_associated_cancellation_slot(h);
    typename Op::ptr p = {std::addressof(h), Op::ptr::allocate(h), nullptr};
    p.p = new (p.v) Op(impl.socket_, impl.reactor_data_, watches_close, buffer, h, socket->get_executor());
    if (slot.is_connected())
      p.p->cancellation_key_ =
          &slot.template emplace<Cancellation>(reactor, &impl.reactor_data_, impl.socket_);
    // As reactive_socket_service_base::start_op: an empty read completes at once; the socket is made
    // non-blocking for the reactor the first time.
    if (buffer.size() > 0 &&
        ((impl.state_ & ad::socket_ops::non_blocking) ||
         ad::socket_ops::set_internal_non_blocking(impl.socket_, impl.state_, true, p.p->ec_)))
      reactor->start_op(ad::reactor::read_op, impl.socket_, impl.reactor_data_, p.p, is_continuation, true);
    else
      reactor->post_immediate_completion(p.p, is_continuation);
    p.v = p.p = nullptr;
  }
};
#endif
}  // namespace drained_read_detail

// One socket's reads. The socket must be open, outlive the reader, and every read must end before the
// socket is moved from.
class DrainedReader {
 public:
  explicit DrainedReader(boost::asio::ip::tcp::socket& socket)
      : socket_(&socket)
#ifdef LLMCHAOS_DRAINED_READ
        ,
        reactor_(&boost::asio::use_service<boost::asio::detail::reactor>(
            drained_read_detail::ImplAccess::of(socket).get_service().context()))
#endif
  {
#ifdef LLMCHAOS_DRAINED_READ
    auto& impl = drained_read_detail::ImplAccess::of(socket).get_implementation();
    watches_close_ = drained_read_detail::watch_peer_close(*reactor_, impl.reactor_data_, impl.socket_);
#endif
  }

  // Whether a short read counts as draining the socket (the registration reports the peer's close).
  bool watches_close() const {
    return watches_close_;
  }

  // As socket.async_read_some(buffer, token): completes with (error_code, bytes read).
  template <class Token>
  auto async_read_some(boost::asio::mutable_buffer buffer, Token&& token) {
#ifdef LLMCHAOS_DRAINED_READ
    return boost::asio::async_initiate<Token, void(boost::system::error_code, std::size_t)>(
        drained_read_detail::Initiate{socket_, reactor_, watches_close_}, token, buffer);
#else
    return socket_->async_read_some(buffer, std::forward<Token>(token));
#endif
  }

 private:
  boost::asio::ip::tcp::socket* socket_;
  bool watches_close_ = false;
#ifdef LLMCHAOS_DRAINED_READ
  boost::asio::detail::reactor* reactor_;
#endif
};

}  // namespace llmchaos
