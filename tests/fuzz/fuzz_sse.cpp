// Client SSE parser + dialect codecs. Input: byte 0 picks the dialect, byte 1 seeds the split points,
// the rest is the response body. Property: splitting the bytes anywhere yields the same events as
// feeding them whole; every event goes through the dialect's codec; the body goes through parse_answer.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "llmchaos/client/dialect_codec.hpp"
#include "llmchaos/client/sse.hpp"

using namespace llmchaos;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const auto dialect = static_cast<Dialect>(data[0] % 3);
  // A small cap now and then exercises the overflow path.
  const std::size_t cap = (data[0] & 0x80) ? 64 : 4 * 1024 * 1024;
  std::uint32_t rng = data[1] * 2654435761u + 1;
  const std::string_view body(reinterpret_cast<const char*>(data + 2), size - 2);

  client::SseParser whole(cap);
  const auto expected = whole.feed(body);

  client::SseParser split(cap);
  std::vector<client::SseEvent> got;
  for (std::size_t i = 0; i < body.size();) {
    rng = rng * 1103515245u + 12345u;
    const std::size_t n = std::min<std::size_t>(body.size() - i, (rng >> 16) % 17);  // 0..16: empty feeds too
    split.feed(body.substr(i, n), got);
    i += n;
  }
  if (!whole.overflowed() && !split.overflowed() && (got != expected || whole.pending() != split.pending()))
    __builtin_trap();  // the split changed what was parsed

  const auto& codec = client::codec_for(dialect);
  client::Answer acc;
  for (const auto& e : got) (void)codec.on_event(e, acc);
  client::Answer plain;
  (void)codec.parse_answer(body, plain);
  return 0;
}
