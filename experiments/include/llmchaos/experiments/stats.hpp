#pragma once
// Percentiles as numpy computes them by default (method "linear", numpy >= 1.22; "interpolation" before):
// for n sorted values a[0..n-1] and a percentile p in [0, 100], the virtual index is h = (n - 1) * p / 100;
// with i = floor(h) and g = h - i the result is a[i] + (a[i+1] - a[i]) * g (linear interpolation
// between the two closest ranks; a[n-1] when i = n - 1). numpy evaluates the interpolation as
// b - (b - a) * (1 - g) when g >= 0.5; we do the same, so results match numpy to the last bit.
#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

namespace llmchaos::experiments {

// Percentile of already sorted values. NaN for an empty span.
double percentile_sorted(std::span<const double> sorted, double percent);

// Several percentiles of unsorted values in O(n) (a histogram selection for large inputs, nth_element
// otherwise); may reorder `values`.
// `percents` may be in any order; results are in the same order. NaN for each when `values` is empty.
std::vector<double> percentiles(std::span<double> values, std::span<const double> percents);

// The same percentiles of n values that are not in an array: `at(rank)` gives the rank-th smallest
// (0-based, rank < n), e.g. from a histogram. Equal to percentile_sorted of the sorted values, bit for bit.
std::vector<double> percentiles_by_rank(std::size_t n, std::span<const double> percents,
                                        const std::function<double(std::size_t rank)>& at);

// A multiset of values in ascending order, kept as runs of equal values: the rank-th smallest in
// O(log runs). Built by LatencyCounts::sorted().
class SortedCounts {
 public:
  std::size_t size() const { return ends_.empty() ? 0 : static_cast<std::size_t>(ends_.back()); }
  double at(std::size_t rank) const;              // the rank-th smallest (0-based; rank < size())
  std::size_t count_at_most(double limit) const;  // how many values v satisfy v <= limit

 private:
  friend class LatencyCounts;
  std::vector<double> values_;       // ascending (std::strong_order)
  std::vector<std::uint64_t> ends_;  // ends_[i]: how many values lie in runs 0..i
};

// Exact order statistics of many latencies without sorting them (the replay feeds millions).
// Traces carry a fixed number of decimals (the writers print 3), so almost every latency is a whole
// number of milliseconds: those are counted per millisecond (the double is recomputed from its bucket
// bit for bit, so nothing is rounded); any other value (more decimals, -0, over `max_ms`, NaN) is kept
// as it is and merged in order by sorted(). Counts from several threads add up with merge().
class LatencyCounts {
 public:
  static constexpr std::uint32_t max_ms = 1u << 18;  // ~262 s: a bucket array of at most 1 MiB

  void add(double sec) {
    ++size_;
    const double ms = sec * 1000.0;
    if (ms >= 0 && ms < max_ms) {
      const auto k = static_cast<std::uint32_t>(ms + 0.5);
      // Exact when k / 1000 rounds to the very same double (bits compared: -0 is not +0).
      if (std::bit_cast<std::uint64_t>(static_cast<double>(k) / 1000.0) ==
          std::bit_cast<std::uint64_t>(sec)) {
        if (k >= per_ms_.size()) grow(k);
        if (per_ms_[k] != UINT32_MAX) {  // a full bucket (4 billion equal values) spills to others_
          ++per_ms_[k];
          return;
        }
      }
    }
    others_.push_back(sec);
  }
  void merge(const LatencyCounts& other);
  std::size_t size() const { return size_; }
  SortedCounts sorted() const;

 private:
  void grow(std::uint32_t ms);

  // per_ms_[k]: values equal to k / 1000.0; as long as the largest k. 32-bit counts keep the buckets
  // that a trace hits most (a few thousand milliseconds around its median) in the L1 cache.
  std::vector<std::uint32_t> per_ms_;
  std::vector<double> others_;  // values that are not a whole number of milliseconds below max_ms
  std::size_t size_ = 0;
};

}  // namespace llmchaos::experiments
