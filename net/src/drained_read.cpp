// The reactor's private members DrainedReader needs (drained_read.hpp), in one translation unit: an
// explicit instantiation is the one place the language does not check access ([temp.spec.general]/6),
// and each may appear once in a program.
#include "llmchaos/net/drained_read.hpp"

#ifdef LLMCHAOS_DRAINED_READ
#include <sys/epoll.h>

#include <cstdint>

namespace llmchaos::drained_read_detail {
namespace {

// Expose<Tag, &Class::member> defines member_of(Tag), which returns the member pointer.
template <class Tag, typename Tag::type Member>
struct Expose {
  friend typename Tag::type member_of(Tag) { return Member; }
};

struct EpollFd {
  using type = int ad::epoll_reactor::*;
  friend type member_of(EpollFd);
};
struct RegisteredEvents {
  using type = std::uint32_t Descriptor::*;
  friend type member_of(RegisteredEvents);
};
struct DescriptorMutex {
  using type = ad::conditionally_enabled_mutex Descriptor::*;
  friend type member_of(DescriptorMutex);
};
// The reactor keeps a descriptor's reported events in its operation's task_result_ (set_ready_events).
struct ReadyEvents {
  using type = unsigned int ad::scheduler_operation::*;
  friend type member_of(ReadyEvents);
};

template struct Expose<EpollFd, &ad::epoll_reactor::epoll_fd_>;
template struct Expose<RegisteredEvents, &Descriptor::registered_events_>;
template struct Expose<DescriptorMutex, &Descriptor::mutex_>;
template struct Expose<ReadyEvents, &ad::scheduler_operation::task_result_>;

}  // namespace

bool watch_peer_close(ad::epoll_reactor& reactor, Descriptor* descriptor, int socket) {
  // A locking reactor may be run by several threads, and it stores the events it reports without the
  // lock (drained_read.hpp): only a reactor of one thread reads them safely.
  if (!descriptor || (descriptor->*member_of(DescriptorMutex{})).enabled()) return false;
  auto& registered = descriptor->*member_of(RegisteredEvents{});
  if (registered == 0) return false;  // not registered with epoll (Asio reports that to each operation)
  if ((registered & EPOLLRDHUP) != 0) return true;
  // Asio rebuilds the registration from registered_events_ whenever it changes it (EPOLLOUT), so the flag
  // stays.
  epoll_event ev{};
  ev.events = registered | EPOLLRDHUP;
  ev.data.ptr = descriptor;
  if (::epoll_ctl(reactor.*member_of(EpollFd{}), EPOLL_CTL_MOD, socket, &ev) != 0) return false;
  registered = ev.events;
  return true;
}

bool peer_close_reported(const Descriptor* descriptor) {
  // The reactor runs on this thread (watch_peer_close). descriptor_state derives privately from the
  // operation; a C-style cast names such a base.
  const auto* op = (const ad::scheduler_operation*)descriptor;  // NOLINT(google-readability-casting)
  return ((op->*member_of(ReadyEvents{})) & EPOLLRDHUP) != 0;
}

}  // namespace llmchaos::drained_read_detail
#endif
