#pragma once
// tests/proxy's stand-in upstream (plain or TLS).
#include <memory>
#include <string>
#include <vector>

namespace boost::asio::ssl {
class context;
}

namespace llmchaos::test {

// The other end for the proxy tests: a one-request upstream on 127.0.0.1:0. It accepts one connection (over
// TLS when given a server context), keeps the raw request (its head and Content-Length body), answers the
// given bytes as they are, and closes.
class OneShotUpstream {
 public:
  explicit OneShotUpstream(std::string answer, boost::asio::ssl::context* tls = nullptr);
  ~OneShotUpstream();
  OneShotUpstream(const OneShotUpstream&) = delete;
  OneShotUpstream& operator=(const OneShotUpstream&) = delete;
  std::string base_url() const;  // "http://127.0.0.1:PORT" ("https://" with TLS)
  std::string request() const;   // the raw request, once the exchange is over

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// An upstream that answers each connection's one request and says nothing of closing (keep-alive, as
// HTTP/1.1 means it), then half-closes at once, its FIN in the answer's last segment, and reads and drops
// whatever else comes, as a server's lingering close does. A request sent on such a connection is never
// answered.
class LingeringUpstream {
 public:
  explicit LingeringUpstream(std::string answer);
  ~LingeringUpstream();
  LingeringUpstream(const LingeringUpstream&) = delete;
  LingeringUpstream& operator=(const LingeringUpstream&) = delete;
  std::string base_url() const;  // "http://127.0.0.1:PORT"
  int connections() const;       // accepted so far
  int ignored() const;           // connections that got bytes after their answer

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace llmchaos::test
