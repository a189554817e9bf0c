#pragma once
// A small HTTP/2 client for the loopback tests (h2c with prior knowledge over a blocking socket, nghttp2's
// client API): submit streams, run the connection until they are done, read what each stream got.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llmchaos::test {

using Fields = std::vector<std::pair<std::string, std::string>>;

struct H2Stream {
  int status = 0;
  Fields headers;
  std::string body;
  bool closed = false;
  std::optional<std::uint32_t> reset;  // the RST_STREAM error code the server sent
  std::string header(const std::string& name) const;
};

class H2Client {
 public:
  explicit H2Client(std::uint16_t port);  // connects; the preface and SETTINGS go out with the first run()
  ~H2Client();
  H2Client(const H2Client&) = delete;
  H2Client& operator=(const H2Client&) = delete;
  // A request: the pseudo-headers from method and path (path empty: no :path at all), then `headers`.
  std::int32_t submit(const std::string& method, const std::string& path, const std::string& body = {},
                      const Fields& headers = {});
  // Sends raw bytes on the connection (after the preface: garbage, for the robustness tests).
  void send_raw(const std::string& bytes);
  // Until every submitted stream has closed (none submitted: until the server ends the connection), a
  // GOAWAY came, the server closed, or timeout_ms passed.
  void run(double timeout_ms = 5000);
  H2Stream& stream(std::int32_t id) { return streams_[id]; }
  std::optional<std::uint32_t> goaway;  // the error code of the server's GOAWAY
  bool server_closed = false;

  struct Impl;

 private:
  Impl* impl_;
  std::map<std::int32_t, H2Stream> streams_;
  friend struct Impl;
};

}  // namespace llmchaos::test
