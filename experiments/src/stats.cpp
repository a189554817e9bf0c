#include "llmchaos/experiments/stats.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cmath>
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

double percentile_sorted(std::span<const double> sorted, double percent) {
  if (sorted.empty()) return nan;
  const Rank r = rank_of(sorted.size(), percent);
  if (r.index + 1 >= sorted.size()) return sorted.back();
  return lerp(sorted[r.index], sorted[r.index + 1], r.gamma);
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
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return percents[a] < percents[b]; });
  std::size_t done = 0;  // values[0..done) are <= everything after them and already placed
  for (const std::size_t k : order) {
    const Rank r = rank_of(n, percents[k]);
    const auto begin = values.begin();
    if (r.index >= done) std::nth_element(begin + static_cast<std::ptrdiff_t>(done), begin + static_cast<std::ptrdiff_t>(r.index), values.end());
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

}  // namespace llmchaos::experiments
