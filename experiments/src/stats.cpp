#include "llmchaos/experiments/stats.hpp"

#include <algorithm>
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

std::vector<double> percentiles(std::span<double> values, std::span<const double> percents) {
  std::vector<double> out(percents.size(), nan);
  if (values.empty()) return out;
  // Ascending order of percents: each nth_element only partitions what lies right of the previous rank.
  std::vector<std::size_t> order(percents.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return percents[a] < percents[b]; });
  const std::size_t n = values.size();
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
