#pragma once
// ErrorDetail: the string and scalar fields of a JSON error body that the classifier's rules read, by
// key, at any depth, in document order. It reads the body without allocating and without parsing all
// of it (classify is on the hot path: bench/decide); the three dialects' decisive fields (type, code,
// status, message, reason, quotaId, retryDelay) have distinct keys, so "any field named K" is all the
// classifier needs. Values are views into the body with their escapes left as written; a body that is
// not a JSON object or array gives no fields. Pinned against a full JSON reading by
// tests/client/test_error_detail.cpp and tests/fuzz/fuzz_error_detail.cpp.
#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string_view>

#include "llmchaos/core/byte_scan.hpp"

// On x86-64 with GCC or Clang the scan picks AVX2 at run time when the CPU has it.
#if !defined(LLMCHAOS_ERROR_DETAIL_AVX2)
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define LLMCHAOS_ERROR_DETAIL_AVX2 1
#else
#define LLMCHAOS_ERROR_DETAIL_AVX2 0
#endif
#endif

namespace llmchaos::client {

// The keys the rules read. Other keys are skipped at scan time, so lookups compare small integers.
enum class DetailKey : std::uint8_t { code, type, status, message, reason, quotaId, retryDelay };

// The key spelled exactly `k`, if the rules read it.
std::optional<DetailKey> detail_key_of(std::string_view k);

class ErrorDetail {
 public:
  struct Field {
    DetailKey key;
    std::string_view value;  // a string's content between its quotes (escapes as written), or a scalar
    bool scalar;             // number, true, false or null (the value is its text)
  };
  // Bodies are read up to 64 KiB and up to `max_fields` fields: more than any error body we know.
  static constexpr std::size_t max_body = 0xffff;
  static constexpr std::size_t max_fields = 32;

  // Which code reads the body: the fastest this CPU runs (AVX2 where it has it), or the portable one.
  // Both give the same fields; tests pin each against a full JSON reading.
  enum class ScanPath { fastest, portable };

  explicit ErrorDetail(std::string_view body, ScanPath path = ScanPath::fastest)
      : body_(body.substr(0, max_body)) {
    scan(path);
  }

  std::size_t size() const { return n_; }
  Field field(std::size_t i) const { return {fields_[i].key, value(i), fields_[i].scalar}; }

  bool has(DetailKey k) const {
    for (std::size_t i = 0; i < n_; ++i)
      if (fields_[i].key == k) return true;
    return false;
  }
  std::string_view first(DetailKey k) const {
    for (std::size_t i = 0; i < n_; ++i)
      if (fields_[i].key == k) return value(i);
    return {};
  }
  // Some field named `k` equals one of `values`.
  bool any(DetailKey k, std::initializer_list<std::string_view> values) const {
    for (std::size_t i = 0; i < n_; ++i)
      if (fields_[i].key == k)
        for (auto v : values)
          if (value(i) == v) return true;
    return false;
  }
  // Some field named `k` contains one of `needles` (case-sensitive: for identifiers like quotaId).
  bool any_contains(DetailKey k, std::initializer_list<std::string_view> needles) const {
    for (std::size_t i = 0; i < n_; ++i)
      if (fields_[i].key == k)
        for (auto n : needles)
          if (byte_scan::contains(value(i), n)) return true;
    return false;
  }
  // Some message contains one of `needles` (lower case), ignoring case.
  bool message_has(std::initializer_list<std::string_view> needles) const {
    if (!lowered_) {  // on first use: most bodies are decided by their codes alone
      lowered_ = true;
      for (std::size_t i = 0; i < n_; ++i)
        if (fields_[i].key == DetailKey::message) append_lower(value(i));
    }
    const std::string_view text(lower_, lower_len_);
    for (auto n : needles)
      if (byte_scan::contains(text, n)) return true;
    return false;
  }
  // The most specific error token for a reason text: a string `code`, else a `type` other than
  // Anthropic's envelope "error", else a Gemini `status`.
  std::string_view token() const {
    for (std::size_t i = 0; i < n_; ++i)
      if (fields_[i].key == DetailKey::code && !fields_[i].scalar && fields_[i].value_len > 0)
        return value(i);
    for (std::size_t i = 0; i < n_; ++i)
      if (fields_[i].key == DetailKey::type && !fields_[i].scalar && value(i) != "error") return value(i);
    return first(DetailKey::status);
  }

 private:
  // Offsets into the body (bodies are cut at 64 KiB): small, and nothing to initialise.
  struct Slot {
    std::uint16_t value_pos, value_len;
    DetailKey key;
    bool scalar;
  };
  std::string_view value(std::size_t i) const {
    return {body_.data() + fields_[i].value_pos, fields_[i].value_len};
  }

  void scan(ScanPath path);
  template <class Masks>
  void scan_windows();
  void append_lower(std::string_view text) const;
#if LLMCHAOS_ERROR_DETAIL_AVX2
  void scan_avx2();
#endif

  std::string_view body_;
  std::array<Slot, max_fields> fields_;
  std::size_t n_ = 0;
  mutable bool lowered_ = false;
  mutable char lower_[768];
  mutable std::size_t lower_len_ = 0;
};

}  // namespace llmchaos::client
