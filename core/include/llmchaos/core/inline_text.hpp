#pragma once
// InlineText<N>: a text of up to N bytes held in the object itself, so building, returning and
// reusing it allocate nothing. For the explanations the policy engine writes at every failure point
// (the classification's reason, the decision's inputs): on a gateway's hot path the allocator cost
// more than deciding. Reads like a std::string_view (and converts to one, and so to a std::string).
// Appending past the capacity cuts the text and ends it in "..."; a writer that builds the text in
// place uses storage() and resize().
#include <cstddef>
#include <cstring>
#include <string_view>

namespace llmchaos {

template <std::size_t Capacity>
class InlineText {
  static_assert(Capacity >= 3, "room for the \"...\" of a cut text");

 public:
  static constexpr std::size_t capacity = Capacity;
  static constexpr std::size_t npos = std::string_view::npos;

  InlineText() = default;
  explicit InlineText(std::string_view text) { append(text); }
  // Copies take the text, not the whole capacity.
  InlineText(const InlineText& other) : size_(other.size_), cut_(other.cut_) {
    std::memcpy(bytes_, other.bytes_, size_);
  }
  InlineText& operator=(const InlineText& other) {
    if (this != &other) {
      size_ = other.size_;
      cut_ = other.cut_;
      std::memcpy(bytes_, other.bytes_, size_);
    }
    return *this;
  }
  InlineText& operator=(std::string_view text) {
    clear();
    return append(text);
  }
  InlineText& operator+=(std::string_view text) { return append(text); }

  // What fits; a text cut short ends in "..." and takes nothing more.
  InlineText& append(std::string_view text) {
    if (cut_) return *this;
    if (text.size() <= Capacity - size_) {
      std::memcpy(bytes_ + size_, text.data(), text.size());
      size_ += text.size();
      return *this;
    }
    constexpr std::size_t before_mark = Capacity - 3;
    if (size_ > before_mark) size_ = before_mark;
    const std::size_t keep = before_mark - size_;
    std::memcpy(bytes_ + size_, text.data(), keep);
    std::memcpy(bytes_ + before_mark, "...", 3);
    size_ = Capacity;
    cut_ = true;
    return *this;
  }

  std::string_view view() const { return {bytes_, size_}; }
  operator std::string_view() const { return view(); }

  const char* data() const { return bytes_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::size_t find(std::string_view text, std::size_t from = 0) const { return view().find(text, from); }
  std::string_view substr(std::size_t from, std::size_t count = npos) const {
    return view().substr(from, count);
  }

  // The bytes to write into (all `capacity` of them), then how many now hold the text (<= capacity).
  char* storage() { return bytes_; }
  void resize(std::size_t size) { size_ = size < Capacity ? size : Capacity; }
  void clear() {
    size_ = 0;
    cut_ = false;
  }

  friend bool operator==(const InlineText& a, const InlineText& b) { return a.view() == b.view(); }
  friend bool operator==(const InlineText& a, std::string_view b) { return a.view() == b; }
  template <class Stream>
  friend Stream& operator<<(Stream& out, const InlineText& text) {
    return out << text.view();
  }

 private:
  std::size_t size_ = 0;
  bool cut_ = false;
  char bytes_[Capacity];  // only the first size_ are the text; the rest is never read
};

}  // namespace llmchaos
