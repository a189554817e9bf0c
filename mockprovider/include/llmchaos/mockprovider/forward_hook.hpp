#pragma once
// The server's one seam toward a forwarder (`llmchaos proxy`'s upstream, `serve --cassettes`; both are
// proxy/'s, wired in by app/): how a session hands an attempt to it and what the forwarder may do on the
// client's connection. The mock never names the proxy: a server without a forwarder (ServerOptions)
// is the mock provider, and its request path makes no call through here. Asio types: include it only
// from sources, never from another public header (server.hpp declares Forwarder).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmchaos/core/types.hpp"
#include "llmchaos/mockprovider/engine.hpp"
#include "llmchaos/mockprovider/plan.hpp"

namespace llmchaos::mock {

enum class WaitEnd { elapsed, client_closed, shutdown };

// How an attempt ended on the client's connection.
struct Executed {
  AttemptOutcome outcome = AttemptOutcome::completed;
  int events = 0;
  int status = 0;
  bool keep_open = false;
};

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// The session's side toward the client. Every call returns false when the client is gone.
class ClientWire {
 public:
  virtual ~ClientWire() = default;
  virtual boost::asio::any_io_executor executor() = 0;
  // Status line and headers (the session adds Server and Connection); chunked, or with Content-Length.
  virtual boost::asio::awaitable<bool> write_head(int status, const HeaderList& headers, bool chunked,
                                                  std::size_t content_length, bool keep_alive) = 0;
  virtual boost::asio::awaitable<bool> write_chunk(std::string_view bytes) = 0;
  // A chunked answer's head and its first chunk: one write where the wire allows it (the client wakes
  // once for both, not for the head and again for the first event). `first_chunk` is not empty.
  // By default the head, then the chunk (write_head_then_chunk).
  virtual boost::asio::awaitable<bool> write_head_and_chunk(int status, const HeaderList& headers,
                                                            bool keep_alive, std::string_view first_chunk);
  virtual boost::asio::awaitable<bool> write_last_chunk() = 0;
  virtual boost::asio::awaitable<bool> write_body(
      std::string_view bytes) = 0;  // raw bytes of a Content-Length body
  // A whole answer with a Content-Length body, in one write (head and body together).
  virtual boost::asio::awaitable<bool> write_whole(int status, const HeaderList& headers,
                                                   std::string_view body, bool keep_alive) = 0;
  virtual boost::asio::awaitable<WaitEnd> wait(double ms) = 0;  // raced against the client closing
  virtual void reset() = 0;                                     // RST the client's connection
  // The plan breaks the answer off here (execute_plan.hpp): over HTTP/1.1 nothing more (the connection is
  // not kept, so the session closes it), over HTTP/2 the stream is reset (RST_STREAM, INTERNAL_ERROR).
  virtual void cut() {}
};

// write_head, then write_chunk: ClientWire::write_head_and_chunk's default, and a wire's own way when it
// cannot join the two.
boost::asio::awaitable<bool> write_head_then_chunk(ClientWire& wire, int status, const HeaderList& headers,
                                                   bool keep_alive, std::string_view first_chunk);

// A request as the client sent it (every header, the target with its query): what is forwarded. Views
// of the session's own request, valid while forward() runs (no copy per request).
struct ForwardRequest {
  std::string_view method, target;  // the target with its credentials, as sent
  const HeaderList& headers;        // lower-cased names
  std::string_view body;
  std::string_view ns, route,
      path;  // where the router placed it; path: below the route (its query's keys masked)
};

class Forwarder {
 public:
  virtual ~Forwarder() = default;
  // Whether `plan` lets the request reach the provider (then forward() executes it); the other plans are
  // the server's own answers, as in `serve`.
  virtual bool forwards_plan(const Plan& plan) const = 0;
  // Makes the request target what the router, and so the ledger, may see: the credentials it carries
  // masked, in place (a target without a query keeps its string, and the string its capacity).
  virtual void mask_ledger_target(std::string& target) const = 0;
  // Executes `plan` (forwards(plan) is true) by forwarding the request; `seq` is its ledger entry.
  virtual boost::asio::awaitable<Executed> forward(ClientWire& client, const ForwardRequest& request,
                                                   const Plan& plan, bool keep_alive, Engine& engine,
                                                   std::uint64_t seq) = 0;
  // The server has stopped (its I/O threads joined, its io_context still alive): drop every upstream
  // connection kept open between requests.
  virtual void close_idle() {}
};

}  // namespace llmchaos::mock
