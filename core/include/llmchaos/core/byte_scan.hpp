#pragma once
// Byte scans of the hot paths (the mock's request headers and JSON strings, the classifier's error
// bodies), 16 or 64 bytes at a time where SSE2 is there: such text is mostly long runs of ordinary bytes,
// and a loop with a test per byte cost more than the rest of reading it. Header-only: it is the inner
// loop of its callers.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace llmchaos::byte_scan {

// The bytes that end a run: a set of these flags.
enum Stop : unsigned {
  quote = 1,        // '"'
  backslash = 2,    // '\\'
  unprintable = 4,  // below 0x20, 0x7f, or above (not printable ASCII)
};

template <unsigned stops>
bool is_stop(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  return ((stops & unprintable) != 0 && (c < 0x20 || c >= 0x7f)) || ((stops & quote) != 0 && c == '"') ||
         ((stops & backslash) != 0 && c == '\\');
}

#if defined(__SSE2__)
// Bit k set: p[k] is in `stops` (p has 16 readable bytes).
template <unsigned stops>
unsigned stop_mask16(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  __m128i stop = _mm_setzero_si128();
  // Signed compare: bytes from 0x80 up are negative, so "< 0x20" catches them too.
  if constexpr ((stops & unprintable) != 0)
    stop = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x20)), _mm_cmpeq_epi8(v, _mm_set1_epi8(0x7f)));
  if constexpr ((stops & quote) != 0) stop = _mm_or_si128(stop, _mm_cmpeq_epi8(v, _mm_set1_epi8('"')));
  if constexpr ((stops & backslash) != 0) stop = _mm_or_si128(stop, _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
  return static_cast<unsigned>(_mm_movemask_epi8(stop));
}
#endif

// The first byte in [p, end) that is in `stops` (end when none).
template <unsigned stops>
const char* run_end(const char* p, const char* end) {
#if defined(__SSE2__)
  for (; end - p >= 16; p += 16)
    if (const unsigned mask = stop_mask16<stops>(p); mask != 0) return p + __builtin_ctz(mask);
#endif
  for (; p < end; ++p)
    if (is_stop<stops>(*p)) return p;
  return end;
}

// Whether `needle` occurs in `text`. For the short texts of error bodies (a message, a quota id):
// std::string_view::find stops at every byte equal to the needle's first; this tests 16 starts at a
// time on the needle's first and last bytes together and compares the rest only where both match.
inline bool contains(std::string_view text, std::string_view needle) {
  const std::size_t n = needle.size();
  if (n == 0) return true;
  if (n > text.size()) return false;
  const std::size_t starts = text.size() - n + 1;  // candidate positions 0 .. starts - 1
  auto rest_matches = [&](std::size_t i) {
    return std::memcmp(text.data() + i + 1, needle.data() + 1, n - 1) == 0;
  };
  std::size_t i = 0;
#if defined(__SSE2__)
  const __m128i first = _mm_set1_epi8(needle.front()), last = _mm_set1_epi8(needle.back());
  for (; i + 16 <= starts; i += 16) {  // reads up to text[i + 15 + n - 1]: inside the text
    const __m128i at_first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i));
    const __m128i at_last = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + i + n - 1));
    auto mask = static_cast<unsigned>(
        _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(at_first, first), _mm_cmpeq_epi8(at_last, last))));
    for (; mask != 0; mask &= mask - 1)
      if (rest_matches(i + static_cast<std::size_t>(__builtin_ctz(mask)))) return true;
  }
#endif
  for (; i < starts; ++i)
    if (text[i] == needle.front() && text[i + n - 1] == needle.back() && rest_matches(i)) return true;
  return false;
}

// The positions of a text's bytes in `stops`, in order, found 64 bytes at a time: for a scanner that
// walks from one such byte to the next (the classifier reads an error body quote to quote). A few
// instructions per position, and few branches that depend on the text: a new search per string (a loop
// whose exit depends on each string's length) cost more in mispredictions than in instructions.
template <unsigned stops>
class Positions {
 public:
  static constexpr std::size_t npos = std::string_view::npos;

  explicit Positions(std::string_view text) : text_(text) {}

  // The next position not yet returned nor skipped (npos: none left).
  std::size_t next() {
    while (window_.pending == 0) {
      if (window_.end >= text_.size()) return npos;
      window_ = load(text_, window_.end);
    }
    const std::size_t at = window_.begin + static_cast<std::size_t>(__builtin_ctzll(window_.pending));
    window_.pending &= window_.pending - 1;
    return at;
  }

  // Forgets the positions before `from`: the caller went past them another way.
  void skip_to(std::size_t from) {
    if (from >= window_.end)
      window_ = from < text_.size() ? load(text_, from) : Window{text_.size(), text_.size(), 0};  // none left
    else if (from > window_.begin)
      window_.pending &= ~std::uint64_t{0} << (from - window_.begin);
  }

 private:
  static constexpr std::size_t window_size = 64;

  struct Window {
    std::size_t begin = 0, end = 0;  // [begin, end) of the text; none loaded yet
    std::uint64_t pending = 0;       // bit k: text[begin + k] is a position still to return
  };

  // The window holding `from`, with the positions from it on pending: the 64 bytes from `from`, or
  // the text's last 64 near its end (every load is of whole blocks inside the text), or a zero-padded
  // copy of a text shorter than 64 bytes. Returned by value, not stored through `this`, so that the
  // caller's cursor can live in registers.
  static Window load(std::string_view text, std::size_t from) {
    if (text.size() >= window_size) {
      const std::size_t begin = std::min(from, text.size() - window_size);
      return {begin, begin + window_size,
              mask64(text.data() + begin) & (~std::uint64_t{0} << (from - begin))};
    }
    char padded[window_size] = {};
    std::memcpy(padded, text.data(), text.size());
    const std::uint64_t inside = (std::uint64_t{1} << text.size()) - 1;  // not the padding
    return {0, text.size(), mask64(padded) & inside & (~std::uint64_t{0} << from)};
  }

  // Bit k set: p[k] is in `stops` (p has 64 readable bytes).
  static std::uint64_t mask64(const char* p) {
#if defined(__SSE2__)
    return std::uint64_t{stop_mask16<stops>(p)} | std::uint64_t{stop_mask16<stops>(p + 16)} << 16 |
           std::uint64_t{stop_mask16<stops>(p + 32)} << 32 | std::uint64_t{stop_mask16<stops>(p + 48)} << 48;
#else
    std::uint64_t mask = 0;
    for (std::size_t k = 0; k < window_size; ++k) mask |= std::uint64_t{is_stop<stops>(p[k])} << k;
    return mask;
#endif
  }

  std::string_view text_;
  Window window_;
};

}  // namespace llmchaos::byte_scan
