#pragma once
// Whether a kept-alive connection that sat idle can carry another request: nothing has arrived on it
// since its last answer. An upstream that closes with its answer's last bytes (a lingering close: the
// FIN in the same segment) leaves the FIN queued behind them, unseen by a read that stopped at the
// answer's length; a request sent on that connection would go unanswered. One non-blocking recv with
// MSG_PEEK on the socket's own descriptor: public system calls only, no reach into Asio.
namespace llmchaos {

// false when the peer's FIN or a reset is queued, when bytes came that no request asked for, or when
// `fd` is no socket; true when the receive queue is empty and the connection is open.
bool idle_socket_open(int fd);

}  // namespace llmchaos
