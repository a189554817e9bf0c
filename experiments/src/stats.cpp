#include "llmchaos/experiments/stats.hpp"

#include <algorithm>
#include <bit>
#include <cmath>
#include <compare>
#include <cstdint>
#include <limits>
#include <numeric>

namespace llmchaos::experiments {

namespace {
constexpr double nan = std::numeric_limits<double>::quiet_NaN();

struct Rank {
  std::size_t index;  // floor of the virtual index
  double gamma;       // fractional part
};

Rank rank_of(std::size_t n, double percent) {
  const double clamped = std::clamp(percent, 0.0, 100.0);
  const double h = (clamped / 100.0) * static_cast<double>(n - 1);
  const double floor_h = std::floor(h);
  return {std::min(static_cast<std::size_t>(floor_h), n - 1), h - floor_h};
}

// numpy's _lerp: symmetric form so that g = 1 gives exactly b.
double lerp(double a, double b, double g) {
  const double diff = b - a;
  return g >= 0.5 ? b - diff * (1.0 - g) : a + diff * g;
}
}  // namespace

std::vector<double> percentiles_by_rank(std::size_t n, std::span<const double> percents,
                                        const std::function<double(std::size_t rank)>& at) {
  std::vector<double> out(percents.size(), nan);
  if (n == 0) return out;
  for (std::size_t k = 0; k < percents.size(); ++k) {
    const Rank r = rank_of(n, percents[k]);
    const double a = at(r.index);
    out[k] = r.index + 1 >= n ? a : lerp(a, at(r.index + 1), r.gamma);
  }
  return out;
}

double percentile_sorted(std::span<const double> sorted, double percent) {
  return percentiles_by_rank(sorted.size(), {&percent, 1}, [&](std::size_t rank) { return sorted[rank]; })[0];
}

namespace {
// Order-preserving map of a double's bits to an unsigned key (sign flipped; negatives inverted).
std::uint64_t order_key(double v) {
  const auto bits = std::bit_cast<std::uint64_t>(v);
  return (bits >> 63) != 0 ? ~bits : bits | (std::uint64_t{1} << 63);
}

// The values at the given ranks, by one histogram pass over the top 16 key bits, one pass gathering
// the few buckets that hold a wanted rank, and a selection inside each bucket: a few linear passes
// instead of nth_element over everything (which dominated the replay of a million requests).
std::vector<double> select_ranks(std::span<const double> values, const std::vector<std::size_t>& ranks) {
  constexpr int shift = 48;
  constexpr std::size_t buckets = std::size_t{1} << 16;
  std::vector<std::uint32_t> counts(buckets, 0);
  for (const double v : values) ++counts[order_key(v) >> shift];
  // Bucket of each rank and the rank inside it.
  std::vector<std::pair<std::size_t, std::size_t>> where;
  std::vector<std::uint8_t> slot_of(buckets, 0);  // 1-based index into `gathered`, 0 = not wanted
  std::vector<std::vector<double>> gathered;
  for (const std::size_t rank : ranks) {
    std::size_t below = 0, b = 0;
    while (below + counts[b] <= rank) below += counts[b++];
    if (slot_of[b] == 0) {
      gathered.emplace_back().reserve(counts[b]);
      slot_of[b] = static_cast<std::uint8_t>(gathered.size());
    }
    where.emplace_back(slot_of[b] - 1u, rank - below);
  }
  for (const double v : values)
    if (const auto slot = slot_of[order_key(v) >> shift]; slot != 0) gathered[slot - 1u].push_back(v);
  std::vector<double> out;
  for (const auto& [slot, local] : where) {
    auto& bucket = gathered[slot];
    std::nth_element(bucket.begin(), bucket.begin() + static_cast<std::ptrdiff_t>(local), bucket.end());
    out.push_back(bucket[local]);
  }
  return out;
}
}  // namespace

std::vector<double> percentiles(std::span<double> values, std::span<const double> percents) {
  std::vector<double> out(percents.size(), nan);
  if (values.empty()) return out;
  const std::size_t n = values.size();
  if (n >= 65536 && percents.size() <= 64) {
    std::vector<std::size_t> ranks;
    for (const double p : percents) {
      const Rank r = rank_of(n, p);
      ranks.push_back(r.index);
      ranks.push_back(std::min(r.index + 1, n - 1));
    }
    const auto at = select_ranks(values, ranks);
    for (std::size_t k = 0; k < percents.size(); ++k) {
      const Rank r = rank_of(n, percents[k]);
      out[k] = r.index + 1 >= n ? at[2 * k] : lerp(at[2 * k], at[2 * k + 1], r.gamma);
    }
    return out;
  }
  // Ascending order of percents: each nth_element only partitions what lies right of the previous rank.
  std::vector<std::size_t> order(percents.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(),
            [&](std::size_t a, std::size_t b) { return percents[a] < percents[b]; });
  std::size_t done = 0;  // values[0..done) are <= everything after them and already placed
  for (const std::size_t k : order) {
    const Rank r = rank_of(n, percents[k]);
    const auto begin = values.begin();
    if (r.index >= done)
      std::nth_element(begin + static_cast<std::ptrdiff_t>(done),
                       begin + static_cast<std::ptrdiff_t>(r.index), values.end());
    const double a = values[r.index];
    if (r.index + 1 >= n) {
      out[k] = a;
    } else {
      const double b = *std::min_element(begin + static_cast<std::ptrdiff_t>(r.index) + 1, values.end());
      out[k] = lerp(a, b, r.gamma);
    }
    done = r.index;
  }
  return out;
}

double SortedCounts::at(std::size_t rank) const {
  const auto run = std::upper_bound(ends_.begin(), ends_.end(), static_cast<std::uint64_t>(rank));
  return values_[static_cast<std::size_t>(run - ends_.begin())];
}

std::size_t SortedCounts::count_at_most(double limit) const {
  // The same comparison as the caller's `v <= limit` (so a NaN limit counts nothing).
  const auto end = std::partition_point(values_.begin(), values_.end(), [&](double v) { return v <= limit; });
  return end == values_.begin()
             ? 0
             : static_cast<std::size_t>(ends_[static_cast<std::size_t>(end - values_.begin()) - 1]);
}

void LatencyCounts::grow(std::uint32_t ms) {
  // Doubling keeps the zero-filling linear; the buckets never go past the largest millisecond seen.
  const std::size_t wanted = std::max<std::size_t>({std::size_t{ms} + 1, 2 * per_ms_.size(), 4096});
  per_ms_.resize(std::min<std::size_t>(wanted, std::size_t{max_ms} + 1), 0);
}

void LatencyCounts::merge(const LatencyCounts& other) {
  if (other.per_ms_.size() > per_ms_.size()) per_ms_.resize(other.per_ms_.size(), 0);
  for (std::size_t k = 0; k < other.per_ms_.size(); ++k) {
    const std::uint64_t sum = std::uint64_t{per_ms_[k]} + other.per_ms_[k];
    per_ms_[k] = static_cast<std::uint32_t>(std::min<std::uint64_t>(sum, UINT32_MAX));
    others_.insert(others_.end(), sum - per_ms_[k],
                   static_cast<double>(k) / 1000.0);  // what a full bucket spills
  }
  others_.insert(others_.end(), other.others_.begin(), other.others_.end());
  size_ += other.size_;
}

SortedCounts LatencyCounts::sorted() const {
  // A total order (IEEE totalOrder) so that any double, -0 and NaN included, has its place.
  const auto before = [](double a, double b) { return std::strong_order(a, b) < 0; };
  std::vector<double> others = others_;
  std::sort(others.begin(), others.end(), before);
  SortedCounts out;
  std::uint64_t total = 0;
  auto push = [&](double value, std::uint64_t count) {
    total += count;
    out.values_.push_back(value);
    out.ends_.push_back(total);
  };
  std::size_t j = 0;
  for (std::size_t k = 0; k < per_ms_.size(); ++k) {
    if (per_ms_[k] == 0) continue;
    const double value = static_cast<double>(k) / 1000.0;  // as add() checked it
    for (; j < others.size() && before(others[j], value); ++j) push(others[j], 1);
    push(value, per_ms_[k]);
  }
  for (; j < others.size(); ++j) push(others[j], 1);
  return out;
}

}  // namespace llmchaos::experiments
