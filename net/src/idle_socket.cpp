#include "llmchaos/net/idle_socket.hpp"

#include <sys/socket.h>

#include <cerrno>

namespace llmchaos {

bool idle_socket_open(int fd) {
  char byte;
  for (;;) {
    const auto n = ::recv(fd, &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (n >= 0) return false;  // 0: the peer's FIN; > 0: bytes nobody asked for
    if (errno == EINTR) continue;
    return errno == EAGAIN || errno == EWOULDBLOCK;
  }
}

}  // namespace llmchaos
