#pragma once
// Append-mostly storage for the ledger's records, in blocks that never move. Under load the ledger
// grows by one record a request, so its cost is the first touch of fresh memory: on the paravirtualised
// VMs we run on, a fault on a fresh 4 KiB page costs 12 to 19 us (about 0.25 us a request, 2 % of the
// mock's CPU per request in bench/mock_throughput), a 4 KiB share of a transparent huge page 1 to 5 us.
// Blocks double from a few records up to 2 MiB; 2 MiB blocks are 2 MiB-aligned and advised as huge
// pages (Linux, THP in `madvise` or `always` mode), so a small ledger (most namespaces) stays small.
#include <algorithm>
#include <cstddef>
#include <new>
#include <stdexcept>
#include <utility>
#include <vector>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace llmchaos::mock {

template <class T>
class RecordBlocks {
 public:
  static constexpr std::size_t kFirstBlock = 8;                    // records
  static constexpr std::size_t kHugeBytes = std::size_t{2} << 20;  // x86-64 and arm64 (4 KiB base pages)

  RecordBlocks() = default;
  RecordBlocks(const RecordBlocks&) = delete;
  RecordBlocks& operator=(const RecordBlocks&) = delete;
  RecordBlocks(RecordBlocks&& other) noexcept { swap(other); }
  RecordBlocks& operator=(RecordBlocks&& other) noexcept {
    RecordBlocks gone;
    gone.swap(other);
    swap(gone);
    return *this;
  }
  ~RecordBlocks() {
    while (!empty()) pop_front();
    for (const Block& b : blocks_) release(b);
  }

  std::size_t size() const { return end_ - begin_; }
  bool empty() const { return end_ == begin_; }

  T& emplace_back() {
    if (blocks_.empty() || blocks_.back().first + blocks_.back().capacity == end_) grow();
    Block& b = blocks_.back();
    T* item = new (b.items + (end_ - b.first)) T{};
    ++end_;
    return *item;
  }

  void pop_front() {
    if (empty()) return;
    Block& b = blocks_.front();
    b.items[begin_ - b.first].~T();
    ++begin_;
    if (begin_ == b.first + b.capacity) {
      release(b);
      blocks_.erase(blocks_.begin());
    }
  }

  // i counts from the oldest kept record; throws std::out_of_range past the end (as deque::at).
  T& at(std::size_t i) { return const_cast<T&>(std::as_const(*this).at(i)); }
  const T& at(std::size_t i) const {
    if (i >= size()) throw std::out_of_range("ledger record index out of range");
    const std::size_t n = begin_ + i;
    // The newest block holds most of the records and takes the updates (finish, note_upstream).
    auto it = blocks_.end() - 1;
    if (n < it->first) {
      it = std::upper_bound(blocks_.begin(), blocks_.end(), n,
                            [](std::size_t k, const Block& b) { return k < b.first; }) -
           1;
    }
    return it->items[n - it->first];
  }

 private:
  struct Block {
    T* items = nullptr;
    std::size_t first = 0;     // index (since the first record ever) of items[0]
    std::size_t capacity = 0;  // records
    std::size_t bytes = 0;
  };

  static constexpr std::size_t alignment(std::size_t bytes) {
    if (bytes == kHugeBytes) return kHugeBytes;
    return alignof(T) > alignof(std::max_align_t) ? alignof(T) : alignof(std::max_align_t);
  }

  void grow() {
    std::size_t bytes = blocks_.empty() ? kFirstBlock * sizeof(T) : blocks_.back().bytes * 2;
    if (bytes > kHugeBytes / 2) bytes = kHugeBytes;
    void* memory = ::operator new (bytes, std::align_val_t{alignment(bytes)});
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (bytes == kHugeBytes) ::madvise(memory, bytes, MADV_HUGEPAGE);  // advice only: failure is harmless
#endif
    blocks_.push_back(Block{static_cast<T*>(memory), end_, bytes / sizeof(T), bytes});
  }

  static void release(const Block& b) {
    ::operator delete (b.items, std::align_val_t{alignment(b.bytes)});
  }

  void swap(RecordBlocks& other) noexcept {
    blocks_.swap(other.blocks_);
    std::swap(begin_, other.begin_);
    std::swap(end_, other.end_);
  }

  std::vector<Block> blocks_;
  std::size_t begin_ = 0;  // index of the oldest kept record
  std::size_t end_ = 0;    // one past the newest
};

}  // namespace llmchaos::mock
