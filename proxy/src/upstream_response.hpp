#pragma once
// The upstream's answer read without Beast's parser where it is plain (a speed trick; bench/README.md,
// proxy): the status line and the fields in one strict pass, then the body by its Content-Length or its
// chunks. Anything this pass does not fully understand (HTTP/1.0, a body until the close, a 1xx/204/304,
// another transfer coding, several lengths, odd bytes, a head over the limits) is left to Beast's parser,
// which then reads the very same bytes: so every unusual answer is read as Beast reads it. Pure functions,
// checked against Beast's parser in tests/proxy/test_upstream_response.cpp.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

namespace llmchaos::proxy {

enum class HeadVerdict {
  ready,      // the head is read: see UpstreamHead
  need_more,  // no complete head yet, and it may still be a plain one
  beast,      // let Beast's parser read this answer
};

struct UpstreamHead {
  int status = 0;
  std::vector<std::pair<std::string_view, std::string_view>> fields;  // as sent, views into the input
  std::optional<std::uint64_t> content_length;                        // none: chunked
  bool keep_alive = true;                                             // no `Connection: close`
  std::size_t head_bytes = 0;                                         // the head's bytes, blank line included
};

inline constexpr std::size_t upstream_head_limit = 8 * 1024;  // Beast's response parser's default
inline constexpr std::size_t upstream_field_limit = 100;

// Reads the answer's head at the start of `in` into `out` (its field list reused).
HeadVerdict read_upstream_head(std::string_view in, UpstreamHead& out);

// A chunked body decoded as its bytes arrive: each call takes what it can from the front of `in`.
class ChunkedBody {
 public:
  struct Step {
    std::size_t consumed = 0;  // bytes of `in` taken (0 with no data: more bytes are needed)
    std::string_view data;     // body bytes decoded by this step (a view into `in`)
  };
  Step next(std::string_view in);
  bool done() const { return state_ == State::done; }
  bool failed() const { return state_ == State::failed; }

 private:
  enum class State { size_line, data, data_end, trailers, done, failed };
  Step fail() {
    state_ = State::failed;
    return {};
  }
  Step size_line(std::string_view in);
  Step trailer_line(std::string_view in);
  State state_ = State::size_line;
  std::uint64_t left_ = 0;  // of the current chunk's data
};

}  // namespace llmchaos::proxy
