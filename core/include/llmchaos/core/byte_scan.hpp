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

// 'A'..'Z' to 'a'..'z', every other byte as it is (no locale: protocol text is ASCII).
inline char ascii_lower(char c) {
  return static_cast<char>(c | ((static_cast<unsigned char>(c - 'A') < 26) << 5));
}

// Whether s, ASCII letters lower-cased, equals `lower` (already lower-case): a header name or token
// against a literal, without a copy.
inline bool iequals_lower(std::string_view s, std::string_view lower) {
  if (s.size() != lower.size()) return false;
  for (std::size_t i = 0; i < s.size(); ++i)
    if (ascii_lower(s[i]) != lower[i]) return false;
  return true;
}

// Whether a and b are equal with ASCII letters compared case-blind (two header names): a call that
// leaves at the first differing byte, where Beast's iequals costs some 110 instructions a call.
inline bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (ascii_lower(a[i]) != ascii_lower(b[i])) return false;
  return true;
}

// The bytes that end a run: a set of these flags.
enum Stop : unsigned {
  quote = 1,        // '"'
  backslash = 2,    // '\\'
  unprintable = 4,  // below 0x20, 0x7f, or above (not printable ASCII)
  colon = 8,        // ':'
  space = 16,       // ' '
  non_token = 32,   // not an RFC 9110 token character (tchar): the end of an HTTP field name
};

// RFC 9110 tchar: ALPHA, DIGIT and !#$%&'*+-.^_`|~ (every visible ASCII byte but the delimiters).
inline bool tchar(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  if (c <= 0x20 || c >= 0x7f) return false;
  switch (c) {
    case '"':
    case '(':
    case ')':
    case ',':
    case '/':
    case ':':
    case ';':
    case '<':
    case '=':
    case '>':
    case '?':
    case '@':
    case '[':
    case '\\':
    case ']':
    case '{':
    case '}':
      return false;
    default:
      return true;
  }
}

template <unsigned stops>
bool is_stop(char ch) {
  const auto c = static_cast<unsigned char>(ch);
  return ((stops & unprintable) != 0 && (c < 0x20 || c >= 0x7f)) || ((stops & quote) != 0 && c == '"') ||
         ((stops & backslash) != 0 && c == '\\') || ((stops & colon) != 0 && c == ':') ||
         ((stops & space) != 0 && c == ' ') || ((stops & non_token) != 0 && !tchar(ch));
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
  if constexpr ((stops & colon) != 0) stop = _mm_or_si128(stop, _mm_cmpeq_epi8(v, _mm_set1_epi8(':')));
  if constexpr ((stops & space) != 0) stop = _mm_or_si128(stop, _mm_cmpeq_epi8(v, _mm_set1_epi8(' ')));
  if constexpr ((stops & non_token) != 0) {
    const auto is = [&v](char c) { return _mm_cmpeq_epi8(v, _mm_set1_epi8(c)); };
    const auto within = [&v](char lo, char hi) {
      return _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(static_cast<char>(lo - 1))),
                           _mm_cmplt_epi8(v, _mm_set1_epi8(static_cast<char>(hi + 1))));
    };
    // Controls, space, DEL and above (signed: 0x80 up is below 0x21 too), then the delimiters
    // "(),/:;<=>?@[\]{} as ranges where they are adjacent.
    __m128i d = _mm_or_si128(_mm_cmplt_epi8(v, _mm_set1_epi8(0x21)), is(0x7f));
    d = _mm_or_si128(d, _mm_or_si128(is('"'), within('(', ')')));
    d = _mm_or_si128(d, _mm_or_si128(is(','), is('/')));
    d = _mm_or_si128(d, _mm_or_si128(within(':', '@'), within('[', ']')));
    d = _mm_or_si128(d, _mm_or_si128(is('{'), is('}')));
    stop = _mm_or_si128(stop, d);
  }
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

// The end of an RFC 9110 token in [p, end) (a field name): its first byte that is not a tchar (end when
// none). Field names are letters, digits and '-' nearly always: 16 bytes are tested for those first, a
// third of the operations of the whole non_token test, which runs only where that stops at another tchar.
inline const char* token_end(const char* p, const char* end) {
#if defined(__SSE2__)
  for (; end - p >= 16; p += 16) {
    const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i folded =
        _mm_or_si128(v, _mm_set1_epi8(0x20));  // 'A'..'Z' to 'a'..'z', no other byte into them
    const __m128i letter = _mm_and_si128(_mm_cmpgt_epi8(folded, _mm_set1_epi8('a' - 1)),
                                         _mm_cmplt_epi8(folded, _mm_set1_epi8('z' + 1)));
    const __m128i digit =
        _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('0' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('9' + 1)));
    const __m128i common = _mm_or_si128(_mm_or_si128(letter, digit), _mm_cmpeq_epi8(v, _mm_set1_epi8('-')));
    if (const unsigned other = ~static_cast<unsigned>(_mm_movemask_epi8(common)) & 0xffffu; other != 0) {
      p += __builtin_ctz(other);
      break;
    }
  }
#endif
  if (p == end || !tchar(*p)) return p;
  return run_end<non_token>(p, end);
}

// dst[0, 16) = src[0, 16) with 'A'..'Z' lower-cased (ascii_lower of each byte, 16 at a time).
inline void ascii_lower16(const char* src, char* dst) {
#if defined(__SSE2__)
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
  const __m128i upper =
      _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8('A' - 1)), _mm_cmplt_epi8(v, _mm_set1_epi8('Z' + 1)));
  _mm_storeu_si128(reinterpret_cast<__m128i*>(dst),
                   _mm_or_si128(v, _mm_and_si128(upper, _mm_set1_epi8(0x20))));
#else
  for (int k = 0; k < 16; ++k) dst[k] = ascii_lower(src[k]);
#endif
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
  if (starts >= 16) {
    const __m128i first = _mm_set1_epi8(needle.front()), last = _mm_set1_epi8(needle.back());
    auto block_has = [&](std::size_t at) {  // starts at .. at + 15; reads up to text[at + 15 + n - 1]
      const __m128i at_first = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + at));
      const __m128i at_last = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + at + n - 1));
      auto mask = static_cast<unsigned>(
          _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(at_first, first), _mm_cmpeq_epi8(at_last, last))));
      for (; mask != 0; mask &= mask - 1)
        if (rest_matches(at + static_cast<std::size_t>(__builtin_ctz(mask)))) return true;
      return false;
    };
    for (; i + 16 <= starts; i += 16)
      if (block_has(i)) return true;
    // The last starts in one block that overlaps the one before rather than byte by byte (testing a
    // start twice changes nothing).
    return i < starts && block_has(starts - 16);
  }
#endif
  for (; i < starts; ++i)
    if (text[i] == needle.front() && text[i + n - 1] == needle.back() && rest_matches(i)) return true;
  return false;
}

// Bit k set: p[k] is in `stops` (p has 64 readable bytes): for a scanner that looks at whole 64-byte
// windows at once (the classifier's error-body reader).
template <unsigned stops>
std::uint64_t mask64(const char* p) {
#if defined(__SSE2__)
  return std::uint64_t{stop_mask16<stops>(p)} | std::uint64_t{stop_mask16<stops>(p + 16)} << 16 |
         std::uint64_t{stop_mask16<stops>(p + 32)} << 32 | std::uint64_t{stop_mask16<stops>(p + 48)} << 48;
#else
  std::uint64_t mask = 0;
  for (std::size_t k = 0; k < 64; ++k) mask |= std::uint64_t{is_stop<stops>(p[k])} << k;
  return mask;
#endif
}

}  // namespace llmchaos::byte_scan
