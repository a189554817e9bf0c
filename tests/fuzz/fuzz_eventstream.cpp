// The AWS event stream decoder (core/eventstream.hpp). Input: byte 0 seeds the split points, the rest
// is a stream. Properties: feeding it in pieces gives the same messages and the same error as decoding
// it whole; every message decoded encodes back to the very bytes it came from.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>
#include <vector>

#include "llmchaos/core/eventstream.hpp"

using namespace llmchaos::eventstream;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  std::uint32_t rng = data[0] * 2654435761u + 1;
  const std::string_view stream(reinterpret_cast<const char*>(data + 1), size - 1);

  std::vector<std::string> whole;  // each message's bytes, decoded one after another from the start
  DecodeError whole_error = DecodeError::none;
  for (std::size_t at = 0; at < stream.size();) {
    const auto d = decode(stream.substr(at));
    if (d.error != DecodeError::none) {
      if (d.error != DecodeError::incomplete) whole_error = d.error;
      break;
    }
    if (encode(*d.message) != stream.substr(at, d.consumed)) std::abort();  // not a round trip
    whole.emplace_back(stream.substr(at, d.consumed));
    at += d.consumed;
  }

  Decoder pieces;
  std::size_t got = 0;
  for (std::size_t i = 0; i < stream.size();) {
    rng = rng * 1103515245u + 12345u;
    const std::size_t n = std::min<std::size_t>(stream.size() - i, (rng >> 16) % 33);
    pieces.feed(stream.substr(i, n));
    i += n;
    while (auto m = pieces.next()) {
      if (got >= whole.size() || encode(*m) != whole[got]) std::abort();  // another message than whole
      ++got;
    }
  }
  if (got != whole.size() || pieces.error() != whole_error) std::abort();
  return 0;
}
