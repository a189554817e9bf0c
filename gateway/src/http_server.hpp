#pragma once
// The gateway's I/O: a blocking HTTP/1.1 server with one thread per connection (Beast's synchronous
// reads and writes; the mock and the proxy serve with coroutines, this one stays simple because each
// request may wait seconds in an upstream call on its own thread). It parses a request into plain data
// (Request), hands it to the request logic with the connection as a Responder, and writes what it is
// told; it decides nothing about the answer but the two it sends itself (ServerReplies). No Beast types
// in this header.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace llmchaos::gateway {

using HeaderList = std::vector<std::pair<std::string, std::string>>;

// A request as the request logic reads it.
struct Request {
  std::string method;  // "GET", "POST", ...
  std::string target;  // path and query
  bool keep_alive = true;
  HeaderList headers;  // as received; header() looks a name up case-insensitively
  std::string body;

  std::string_view header(std::string_view name) const;  // "" when absent
  std::string_view path() const;                         // target without its query
};

// A whole answer.
struct Reply {
  int status = 200;
  std::string body;
  std::string content_type = "application/json";
  HeaderList headers;
};

// The connection a request came on, as the request logic answers on it: one reply, or one SSE stream
// (200, text/event-stream, chunked: a chunk per frame). A client that left makes every later write a
// no-op (broken()). Stream writes may come from another thread than the request's, one at a time.
class Responder {
 public:
  virtual ~Responder() = default;
  virtual void reply(const Reply& reply) = 0;
  virtual void start_stream(const HeaderList& headers) = 0;
  virtual void send(std::string_view frame) = 0;  // one SSE frame as one chunk; "" sends nothing
  virtual void end_stream() = 0;
  virtual bool stream_started() const = 0;
  virtual bool broken() const = 0;
};

// The answers the server gives without asking the logic (the connection is closed after each).
struct ServerReplies {
  Reply overloaded;  // over max_connections, or stopping
  Reply too_large;   // a request over the body or header limit
};

struct ServerLimits {
  std::size_t max_connections = 256;
  std::size_t body_limit = 8 * 1024 * 1024;
  std::size_t header_limit = 64 * 1024;
};

class HttpServer {
 public:
  // Returns whether the connection stays open for the next request (the request's keep-alive, and
  // false after a broken stream).
  using Handler = std::function<bool(const Request&, Responder&)>;

  HttpServer(Handler handler, ServerReplies replies, ServerLimits limits);
  ~HttpServer();  // stops
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  void start(const std::string& bind, std::uint16_t port);  // listens; throws naming bind:port
  // Stops accepting and shuts every connection down; true when every connection thread ended within
  // 900 ms (one stuck in its handler keeps the handler alive until it returns: threads are detached).
  bool stop();
  std::uint16_t port() const;

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the connection threads
};

}  // namespace llmchaos::gateway
