#pragma once
// A raw HTTP/1.1 client for the loopback tests: it records every byte and how the connection ended
// (clean EOF, RST, or our own deadline), so a cut, a reset and a hold can be told apart.
#include <boost/json.hpp>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "llmchaos/core/types.hpp"

namespace llmchaos::test {

struct WireReply {
  bool connected = false;
  bool eof = false;        // the server closed (FIN)
  bool reset = false;      // the server reset (RST)
  bool timed_out = false;  // our deadline passed first (we closed)
  std::string raw;         // every byte received
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // lower-cased names
  bool chunked = false;
  bool complete = false;  // Content-Length satisfied, or the last chunk seen
  std::string body;       // de-chunked
  std::string header(std::string_view name) const;
  bool has_header(std::string_view name) const;
  boost::json::value json() const;  // body as JSON (throws when it is not)
};

// Sends `request` (raw bytes) and reads until the server closes or `timeout_ms` passes.
WireReply wire_exchange(std::uint16_t port, const std::string& request, double timeout_ms = 5000);
// "METHOD target HTTP/1.1" with Host, Content-Length and Connection: close.
std::string http_request(const std::string& method, const std::string& target, const std::string& body = {},
                         const std::vector<std::pair<std::string, std::string>>& headers = {});

// One SSE event as a client sees it.
struct SseEvent {
  std::string event;  // the event: line ("" when absent)
  std::string data;   // the data: line
  std::string raw;    // the frame as sent, separator included
};
std::vector<SseEvent> sse_events(const std::string& body);
// The visible text of one event in a dialect ("" for frames that carry none).
std::string event_text(Dialect d, const SseEvent& e);

// A provider request of each dialect on route path `base` ("/ns/route" or "/route").
struct ChatCall {
  std::string target;
  std::string body;
};
ChatCall chat_call(Dialect d, const std::string& base, bool stream,
                   const std::string& extra_json_members = {});

}  // namespace llmchaos::test
