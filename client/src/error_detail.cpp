#include "llmchaos/client/error_detail.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <iterator>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#if LLMCHAOS_ERROR_DETAIL_AVX2
#include <immintrin.h>
#endif

namespace llmchaos::client {
namespace {

// Blanks are all at or below ' ' and rare in provider bodies: one compare for the usual byte.
bool blank(char c) {
  return static_cast<unsigned char>(c) <= ' ' && (c == ' ' || c == '\n' || c == '\r' || c == '\t');
}

// The keys the rules read, in one table: their names, and the lengths the window masks look for.
constexpr std::pair<std::string_view, DetailKey> detail_keys[] = {{"code", DetailKey::code},
                                                                  {"type", DetailKey::type},
                                                                  {"status", DetailKey::status},
                                                                  {"reason", DetailKey::reason},
                                                                  {"message", DetailKey::message},
                                                                  {"quotaId", DetailKey::quotaId},
                                                                  {"retryDelay", DetailKey::retryDelay}};
constexpr std::size_t key_lengths[] = {4, 6, 7, 10};  // in increasing order
constexpr bool lengths_cover_keys() {
  for (const auto& [name, key] : detail_keys)
    if (std::find(std::begin(key_lengths), std::end(key_lengths), name.size()) == std::end(key_lengths))
      return false;
  return true;
}
static_assert(lengths_cover_keys(), "every key's length must be one the scan looks for");

// The key whose closing quote is at `close`, if the rules read it: byte by byte. In valid JSON a quote
// followed (after blanks) by a colon closes a key; its opening quote is the nearest quote before it,
// which is not an escaped one (a key the rules read has no quote nor backslash in it). Only the lengths
// of the keys the rules read are tried: any other key is skipped without reading it.
std::optional<DetailKey> key_closing_at(const char* begin, std::size_t close) {
  for (const std::size_t len : key_lengths) {
    if (close < len + 1) return std::nullopt;
    const std::size_t open = close - len - 1;
    if (begin[open] != '"') continue;
    if (open > 0 && begin[open - 1] == '\\') return std::nullopt;  // an escaped quote: inside a longer key
    return detail_key_of({begin + open + 1, len});  // no match: the text holds a quote, or another key
  }
  return std::nullopt;
}

// The same when the caller knows the key's length (from its nearest opening quote) and the key ends at
// least 8 bytes into the body: the key's last (up to) eight bytes, and for a longer key its first two,
// compared as words with each key's, without a branch per byte or per key (a body has a few such
// candidates, and a mispredicted branch costs more than the compares). Little-endian words.
struct KeyWords {
  std::size_t len;
  std::uint64_t last8;   // the last min(len, 8) bytes, the first of them in the lowest byte
  std::uint16_t first2;  // the first two bytes of a key longer than 8 (0 otherwise)
};
constexpr std::uint64_t word_of(std::string_view text) {
  std::uint64_t w = 0;
  for (std::size_t i = 0; i < text.size(); ++i)
    w |= std::uint64_t{static_cast<unsigned char>(text[i])} << (8 * i);
  return w;
}
constexpr KeyWords key_words_of(std::string_view name) {
  const std::size_t len = name.size();
  return {len, word_of(name.substr(len > 8 ? len - 8 : 0)),
          static_cast<std::uint16_t>(len > 8 ? word_of(name.substr(0, 2)) : 0)};
}
constexpr auto key_words = [] {
  std::array<KeyWords, std::size(detail_keys)> words{};
  for (std::size_t i = 0; i < words.size(); ++i) words[i] = key_words_of(detail_keys[i].first);
  return words;
}();
constexpr bool words_work = std::endian::native == std::endian::little;

__attribute__((always_inline)) inline std::optional<DetailKey> key_by_words(const char* begin,
                                                                            std::size_t close,
                                                                            std::size_t len) {
  if constexpr (!words_work) return key_closing_at(begin, close);
  std::uint64_t last8;
  std::memcpy(&last8, begin + close - 8, 8);
  last8 >>= 8 * (8 - std::min<std::size_t>(len, 8));
  std::uint16_t first2 = 0;
  if (len > 8) std::memcpy(&first2, begin + close - len, 2);
  int found = -1;
  for (int i = 0; i < static_cast<int>(key_words.size()); ++i) {
    const KeyWords& k = key_words[i];
    found = len == k.len && last8 == k.last8 && first2 == k.first2 ? i : found;
  }
  const std::size_t open = close - len - 1;
  if (found < 0 || (open > 0 && begin[open - 1] == '\\'))
    return std::nullopt;  // escaped: inside a longer key
  return detail_keys[found].second;
}

// The quote that ends the string whose content starts at `p` (nullptr: unterminated); a backslash takes
// the byte after it along, so an escaped quote never ends it.
const char* string_end(const char* p, const char* end) {
  for (;;) {
    p = byte_scan::run_end<byte_scan::quote | byte_scan::backslash>(p, end);
    if (p == end) return nullptr;
    if (*p == '"') return p;
    if (end - p <= 2) return nullptr;  // a backslash at (or just before) the end: no closing quote
    p += 2;
  }
}

}  // namespace

std::optional<DetailKey> detail_key_of(std::string_view k) {
  for (const auto& [name, key] : detail_keys)
    if (k == name) return key;
  return std::nullopt;
}

// The masks of a 64-byte window: which bytes are quotes, which are colons.
struct WindowMasks {
  std::uint64_t quotes, colons;
};

// Portable (SSE2 on x86-64): four 16-byte compares per character.
struct BaselineMasks {
  static WindowMasks of(const char* p) {
    return {byte_scan::mask64<byte_scan::quote>(p), byte_scan::mask64<byte_scan::colon>(p)};
  }
};

#if LLMCHAOS_ERROR_DETAIL_AVX2
// Two 32-byte compares per character, on CPUs that have AVX2 (chosen at run time, scan()): compiled
// for AVX2 in this one function only, so the rest of the program runs on any x86-64.
struct Avx2Masks {
  __attribute__((target("avx2"))) static WindowMasks of(const char* p) {
    const __m256i low = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    const __m256i high = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 32));
    auto mask = [&](char c) __attribute__((target("avx2"))) {
      const __m256i want = _mm256_set1_epi8(c);
      return std::uint64_t{static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(low, want)))} |
             std::uint64_t{static_cast<std::uint32_t>(_mm256_movemask_epi8(_mm256_cmpeq_epi8(high, want)))}
                 << 32;
    };
    return {mask('"'), mask(':')};
  }
};
#endif

// Key by key, 64 bytes at a time: every key is a quoted string followed by a colon, and the keys the
// rules read are 4, 6, 7 or 10 bytes long, so a colon right after a quote with another quote 4, 6, 7 or
// 10 bytes before that is a candidate, found with a few shifts of the window's quote and colon masks;
// the rest of the body (a Gemini QuotaFailure has some thirty strings, the rules read five) costs no
// branch. A colon after a blank may follow a spaced key (`"code" : 1`): those few are read byte by
// byte. A colon inside a string is preceded by a quote only when that quote is escaped; then the
// "key" ends in a backslash, which no key the rules read does, so only real keys are taken.
template <class Masks>
__attribute__((always_inline)) inline void ErrorDetail::scan_windows() {
  const char* const begin = body_.data();
  const char* const end = begin + body_.size();
  // The value after the colon at `colon`, for the key `key`.
  auto take = [&](std::size_t colon, DetailKey key) __attribute__((always_inline)) {
    const char* value = begin + colon + 1;
    while (value < end && blank(*value)) ++value;
    if (value == end) return;
    const char* value_end = value;
    bool scalar = false;
    if (*value == '"') {
      value_end = string_end(++value, end);
      if (value_end == nullptr) return;
    } else if (*value != '{' && *value != '[') {  // number, true, false, null
      while (value_end < end && *value_end != ',' && *value_end != '}' && *value_end != ']' &&
             !blank(*value_end))
        ++value_end;
      scalar = true;
    } else {
      return;  // an object or array: its fields are read as they come
    }
    fields_[n_++] = {static_cast<std::uint16_t>(value - begin), static_cast<std::uint16_t>(value_end - value),
                     key, scalar};
  };
  // A colon that is not right after a quote: after a spaced key (`"code" : 1`), or inside a string.
  auto take_spaced = [&](std::size_t colon) {
    std::size_t close = colon;
    if (close == 0 || !blank(begin[close - 1])) return;
    while (close > 0 && blank(begin[close - 1])) --close;
    if (close == 0 || begin[close - 1] != '"') return;
    if (const auto key = key_closing_at(begin, close - 1)) take(colon, *key);
  };

  constexpr std::size_t window = 64;
  std::uint64_t quotes_before = 0;  // the previous window's quote mask, for the shifts across its end
  for (std::size_t base = 0; base < body_.size() && n_ < max_fields; base += window) {
    WindowMasks masks;
    if (body_.size() - base >= window) {
      masks = Masks::of(begin + base);
    } else if (body_.size() >= window) {
      // The tail: the body's last 64 bytes, shifted so that bit 0 is `base` again (the bytes past the
      // end come in as zeros). A copy into a padded block would be read back before the copy is done.
      const std::size_t back = base - (body_.size() - window);
      masks = Masks::of(end - window);
      masks = {masks.quotes >> back, masks.colons >> back};
    } else {  // a body shorter than one window: a zero-padded copy (no quote nor colon in the padding)
      char padded[window] = {};
      std::memcpy(padded, begin, body_.size());
      masks = Masks::of(padded);
    }
    const std::uint64_t quotes = masks.quotes, colons = masks.colons;  // named: clang 14 captures no bindings
    // Bit k: the byte n before position k is a quote (n in 1..12).
    const std::uint64_t before = quotes_before;
    auto quote_back = [&](unsigned n) { return quotes << n | before >> (window - n); };
    quotes_before = quotes;
    const std::uint64_t after_quote = colons & quote_back(1);
    // A key of 4, 6, 7 or 10 bytes opens 6, 8, 9 or 12 bytes before its colon.
    static_assert(std::size(key_lengths) == 4);
    const std::uint64_t open0 = quote_back(key_lengths[0] + 2), open1 = quote_back(key_lengths[1] + 2),
                        open2 = quote_back(key_lengths[2] + 2);
    const std::uint64_t candidates = after_quote & (open0 | open1 | open2 | quote_back(key_lengths[3] + 2));
    for (std::uint64_t m = candidates | (colons & ~after_quote); m != 0 && n_ < max_fields; m &= m - 1) {
      const auto at = static_cast<unsigned>(__builtin_ctzll(m));
      const std::size_t colon = base + at;
      if ((after_quote >> at & 1) == 0) {
        take_spaced(colon);
        continue;
      }
      const std::size_t close = colon - 1;
      // The nearest quote is the opening one; a longer key with a quote inside is none of ours.
      const std::size_t len = (open0 >> at & 1) != 0   ? key_lengths[0]
                              : (open1 >> at & 1) != 0 ? key_lengths[1]
                              : (open2 >> at & 1) != 0 ? key_lengths[2]
                                                       : key_lengths[3];
      // The body's first key may be too near its start for a word.
      const auto key = close >= 8 ? key_by_words(begin, close, len) : key_closing_at(begin, close);
      if (key) take(colon, *key);
    }
  }
}

void ErrorDetail::scan(ScanPath path) {
  const char* const begin = body_.data();
  const char* const end = begin + body_.size();
  const char* p = begin;
  while (p < end && blank(*p)) ++p;
  if (p == end || (*p != '{' && *p != '[')) return;  // not JSON: no detail

#if LLMCHAOS_ERROR_DETAIL_AVX2
  static const bool avx2 = __builtin_cpu_supports("avx2");
  if (avx2 && path == ScanPath::fastest) return scan_avx2();
#else
  (void)path;
#endif
  scan_windows<BaselineMasks>();
}

#if LLMCHAOS_ERROR_DETAIL_AVX2
__attribute__((target("avx2"))) void ErrorDetail::scan_avx2() {
  scan_windows<Avx2Masks>();
}
#endif

void ErrorDetail::append_lower(std::string_view text) const {
  if (lower_len_ > 0 && lower_len_ < sizeof lower_) lower_[lower_len_++] = '\n';
  const std::size_t n = std::min(text.size(), sizeof lower_ - lower_len_);
  char* out = lower_ + lower_len_;
#if defined(__SSE2__)
  // 16 bytes at a time: a message is ~100 bytes, and a byte loop cost more than the rules reading it.
  // The last block overlaps the one before rather than leaving a tail (lowering twice is harmless).
  // Signed compares: bytes from 0x80 up are negative, so they are never taken for 'A'..'Z'.
  if (n >= 16) {
    const __m128i before_a = _mm_set1_epi8('A' - 1), after_z = _mm_set1_epi8('Z' + 1),
                  case_bit = _mm_set1_epi8(0x20);
    auto lower16 = [&](std::size_t at) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(text.data() + at));
      const __m128i upper = _mm_and_si128(_mm_cmpgt_epi8(v, before_a), _mm_cmplt_epi8(v, after_z));
      _mm_storeu_si128(reinterpret_cast<__m128i*>(out + at), _mm_or_si128(v, _mm_and_si128(upper, case_bit)));
    };
    for (std::size_t i = 0; i + 16 < n; i += 16) lower16(i);
    lower16(n - 16);
    lower_len_ += n;
    return;
  }
#endif
  for (std::size_t i = 0; i < n; ++i) out[i] = byte_scan::ascii_lower(text[i]);
  lower_len_ += n;
}

}  // namespace llmchaos::client
