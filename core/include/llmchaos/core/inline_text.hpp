#pragma once
// InlineText<N>: a text of up to N bytes held in the object itself, so building, returning and
// reusing it allocate nothing. For the explanations the policy engine writes at every failure point
// (the decision's inputs): on a gateway's hot path the allocator cost more than deciding. Reads like a
// std::string_view (and converts to one, and so to a std::string); writing goes through storage() and
// resize().
#include <cstddef>
#include <string_view>

namespace llmchaos {

template <std::size_t Capacity>
class InlineText {
 public:
  static constexpr std::size_t capacity = Capacity;
  static constexpr std::size_t npos = std::string_view::npos;

  std::string_view view() const { return {bytes_, size_}; }
  operator std::string_view() const { return view(); }

  const char* data() const { return bytes_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t find(std::string_view text, std::size_t from = 0) const { return view().find(text, from); }
  std::string_view substr(std::size_t from, std::size_t count = npos) const { return view().substr(from, count); }

  // The bytes to write into (all `capacity` of them), then how many now hold the text (<= capacity).
  char* storage() { return bytes_; }
  void resize(std::size_t size) { size_ = size < Capacity ? size : Capacity; }
  void clear() { size_ = 0; }

  friend bool operator==(const InlineText& a, const InlineText& b) { return a.view() == b.view(); }
  friend bool operator==(const InlineText& a, std::string_view b) { return a.view() == b; }
  template <class Stream>
  friend Stream& operator<<(Stream& out, const InlineText& text) {
    return out << text.view();
  }

 private:
  std::size_t size_ = 0;
  char bytes_[Capacity];  // only the first size_ are the text; the rest is never read
};

}  // namespace llmchaos
