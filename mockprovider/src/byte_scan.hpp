#pragma once
// Byte scans of the request hot path (header values, JSON strings), 16 bytes at a time where SSE2 is
// there: a request's text is mostly runs of plain printable ASCII, and a loop with a test per byte
// cost more than the rest of reading it.
#include <cstddef>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace llmchaos::mock::detail {

// The first byte in [p, end) that is not printable ASCII (below 0x20, 0x7f or above), or, when
// `json_string`, that is also '"' or '\\' (end when none).
template <bool json_string> const char* plain_run_end(const char* p, const char* end) {
#if defined(__SSE2__)
  const __m128i space = _mm_set1_epi8(0x20), del = _mm_set1_epi8(0x7f);
  const __m128i quote = _mm_set1_epi8('"'), backslash = _mm_set1_epi8('\\');
  while (end - p >= 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    // Signed compare: bytes from 0x80 up are negative, so "< 0x20" catches them too.
    __m128i stop = _mm_or_si128(_mm_cmplt_epi8(v, space), _mm_cmpeq_epi8(v, del));
    if constexpr (json_string) stop = _mm_or_si128(stop, _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash)));
    if (const int mask = _mm_movemask_epi8(stop); mask != 0) return p + __builtin_ctz(static_cast<unsigned>(mask));
    p += 16;
  }
#endif
  for (; p < end; ++p) {
    const auto c = static_cast<unsigned char>(*p);
    if (c < 0x20 || c >= 0x7f) return p;
    if constexpr (json_string)
      if (c == '"' || c == '\\') return p;
  }
  return end;
}

}  // namespace llmchaos::mock::detail
