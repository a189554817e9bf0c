#pragma once
// The head of the answer the proxy delivers to its client: the upstream's (or a cassette's) status and
// headers, hop-by-hop headers removed. An upstream connection keeps one (UpstreamReading::answer) and
// fills it in place for each exchange, reusing its strings.
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace llmchaos::proxy::detail {

struct AnswerHead {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;  // as mock::HeaderList
  bool sse = false;                     // a stream: text/event-stream or an AWS event stream
  std::optional<std::uint64_t> length;  // Content-Length (none: chunked or until close)
};

}  // namespace llmchaos::proxy::detail
