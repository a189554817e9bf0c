#pragma once
// Cassettes: one recorded exchange with an upstream per file (`llmchaos proxy --record DIR`), replayed
// as a route's healthy answer (`llmchaos serve --cassettes DIR`). The file format is a public contract,
// documented in proxy/CASSETTES.md (format 1). Pure functions and plain data only: the proxy's
// forwarder records (src/upstream_forwarder.cpp), the cassette forwarder replays
// (src/cassette_forwarder.cpp).
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "llmchaos/core/spec_error.hpp"
#include "llmchaos/core/types.hpp"
#include "llmchaos/proxy/stream_edit.hpp"

namespace llmchaos::mock {
class Forwarder;  // mockprovider/forward_hook.hpp
}  // namespace llmchaos::mock

namespace llmchaos::proxy {

inline constexpr int cassette_format = 1;
inline constexpr std::string_view cassette_suffix = ".cassette.json";
inline constexpr std::size_t cassette_size_limit = 64 * 1024 * 1024;  // larger files are refused, never read

struct CassetteFrame {
  double at_ms = 0;   // after the response head arrived
  std::string bytes;  // one whole frame as the upstream sent it (an SSE event with its separator)
};

struct Cassette {
  int format = cassette_format;
  std::string key;  // cassette_key() of the request: the file is KEY.cassette.json
  // The request as the client sent it, less its credentials (secret_header(), `key=` in the query).
  Dialect dialect = Dialect::openai;
  std::string method = "POST";
  std::string path;  // below the route, e.g. "/v1/chat/completions"
  std::vector<std::pair<std::string, std::string>> request_headers;
  std::string request_body;
  // The upstream's answer.
  int status = 200;
  std::vector<std::pair<std::string, std::string>> headers;  // less hop-by-hop and credential headers
  double head_ms = 0;                                        // from sending the request to the status line
  bool streamed = false;                                     // an SSE answer: `frames`; otherwise `body`
  std::vector<CassetteFrame> frames;
  std::string body;
  double end_ms = 0;  // after the head: the end of the answer
};

// The request as the cassette key sees it: the dialect, the method, the path below the route with its
// query less the credential parameters (key, api_key), and of the JSON body only the members that shape
// the answer (model, messages, system, contents, systemInstruction, input, instructions, tools, stream,
// stream_options), with every object's members sorted. Ids,
// metadata, the idempotency key and every header are left out. A body that is not a JSON object enters
// whole. Canonical JSON text.
std::string normalised_request(Dialect dialect, std::string_view method, std::string_view path,
                               std::string_view body);
// SHA-256 of normalised_request(), 64 lower-case hex digits.
std::string cassette_key(Dialect dialect, std::string_view method, std::string_view path,
                         std::string_view body);
std::string cassette_file_name(std::string_view key);  // KEY.cassette.json

// The file's text (JSON, format 1).
std::string cassette_json(const Cassette& cassette);
// Reads a cassette file's text; throws SpecError / SpecErrors naming file:line:col (bad JSON, an unknown
// format, a missing or mistyped field). Never crashes on hostile input (size, depth, garbage).
Cassette parse_cassette(std::string_view text, const std::string& file);
// `llmchaos lint` on one cassette file: every error found (empty: a valid cassette).
std::vector<SpecError> lint_cassette_file(const std::string& path);

// Builds a cassette from an exchange as it is read (pure: the caller stamps the times).
class CassetteRecorder {
 public:
  explicit CassetteRecorder(Cassette request);  // the request members and key filled in
  void on_head(int status, std::vector<std::pair<std::string, std::string>> headers, double head_ms,
               bool sse);
  void on_bytes(std::string_view bytes, double at_ms);  // a piece of the body, `at_ms` after the head
  void on_end(double at_ms);                            // the body was read to its end
  bool complete() const { return complete_; }
  const Cassette& cassette() const { return cassette_; }

 private:
  Cassette cassette_;
  FrameSplitter splitter_;  // the frames (the dialect's framing), stamped when each is whole
  bool complete_ = false;
};

// `serve --cassettes DIR`: answers a forwarded attempt (the healthy answer's plans) from
// DIR/KEY.cassette.json with its recorded timing scaled by `time_scale`, the plan's stream edit applied to
// the recorded frames as the proxy applies it to real ones. On a miss: `on_miss` null gives a 501 naming the
// key (and the file it looked for); otherwise the attempt goes to `on_miss` (an upstream forwarder recording
// into DIR).
struct CassetteOptions {
  std::string dir;
  double time_scale = 1.0;
};
std::shared_ptr<mock::Forwarder> make_cassette_forwarder(CassetteOptions options,
                                                         std::shared_ptr<mock::Forwarder> on_miss);

}  // namespace llmchaos::proxy
