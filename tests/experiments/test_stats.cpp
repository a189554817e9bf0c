#include <algorithm>
#include <bit>
#include <catch2/catch.hpp>
#include <cmath>
#include <compare>
#include <cstdint>
#include <vector>

#include "llmchaos/core/rng.hpp"
#include "llmchaos/experiments/stats.hpp"

using namespace llmchaos;
using namespace llmchaos::experiments;

// Expected values are numpy.percentile(a, q) with the default method, worked out by hand:
// h = (n - 1) * q / 100, result = a[floor h] + (a[floor h + 1] - a[floor h]) * frac(h).
TEST_CASE("percentiles interpolate linearly between the closest ranks as numpy does",
          "[experiments][stats]") {
  const std::vector<double> a = {1, 2, 3, 4};
  CHECK(percentile_sorted(a, 0) == 1);
  CHECK(percentile_sorted(a, 50) == 2.5);           // h = 1.5
  CHECK(percentile_sorted(a, 95) == Approx(3.85));  // h = 2.85
  CHECK(percentile_sorted(a, 99) == Approx(3.97));  // h = 2.97
  CHECK(percentile_sorted(a, 100) == 4);
  const std::vector<double> b = {10, 20, 30, 40, 50};
  CHECK(percentile_sorted(b, 25) == 20);            // h = 1 exactly
  CHECK(percentile_sorted(b, 90) == Approx(46));    // h = 3.6
  CHECK(percentile_sorted(b, 33) == Approx(23.2));  // h = 1.32
}

TEST_CASE("a percentile of one value is that value and of none it is NaN", "[experiments][stats]") {
  const std::vector<double> one = {7.5};
  CHECK(percentile_sorted(one, 0) == 7.5);
  CHECK(percentile_sorted(one, 99) == 7.5);
  CHECK(std::isnan(percentile_sorted(std::vector<double>{}, 50)));
  std::vector<double> none;
  const std::vector<double> qs = {50, 99};
  const auto p = percentiles(none, qs);
  REQUIRE(p.size() == 2);
  CHECK(std::isnan(p[0]));
  CHECK(std::isnan(p[1]));
}

TEST_CASE("selection-based percentiles of unsorted values equal the sorted definition",
          "[experiments][stats]") {
  Rng rng(11);
  for (const int n : {1, 2, 3, 10, 101, 1000}) {
    std::vector<double> values;
    for (int i = 0; i < n; ++i) values.push_back(std::floor(rng.uniform() * 50));  // with ties
    std::vector<double> sorted = values;
    std::sort(sorted.begin(), sorted.end());
    const std::vector<double> qs = {99, 50, 0, 95, 100, 50, 12.5};  // any order, repeated
    const auto got = percentiles(values, qs);
    for (std::size_t k = 0; k < qs.size(); ++k) CHECK(got[k] == percentile_sorted(sorted, qs[k]));
  }
}

TEST_CASE("the unsorted percentiles of a hand-made list match the numpy values", "[experiments][stats]") {
  std::vector<double> v = {4, 1, 3, 2};
  const std::vector<double> qs = {50, 95, 99, 100};
  const auto p = percentiles(v, qs);
  CHECK(p[0] == 2.5);
  CHECK(p[1] == Approx(3.85));
  CHECK(p[2] == Approx(3.97));
  CHECK(p[3] == 4);
}

TEST_CASE("large inputs take the histogram selection and still equal the sorted definition",
          "[experiments][stats]") {
  Rng rng(12);
  std::vector<double> values;
  for (int i = 0; i < 200000; ++i) {
    // Ties, negatives, zeros of both signs and a wide range of magnitudes.
    const double u = rng.uniform();
    values.push_back(i % 97 == 0   ? -0.0
                     : i % 89 == 0 ? 0.0
                                   : (u - 0.3) * std::pow(10.0, static_cast<double>(i % 7) - 3));
    if (i % 5 == 0) values.back() = std::round(values.back());
  }
  std::vector<double> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const std::vector<double> qs = {0, 0.1, 25, 50, 95, 99, 99.99, 100};
  const auto got = percentiles(values, qs);
  for (std::size_t k = 0; k < qs.size(); ++k) CHECK(got[k] == percentile_sorted(sorted, qs[k]));
}

namespace {
// Every kind of latency the counts must place: whole milliseconds (the writers' 3 decimals, with
// ties), 2 and 6 decimals, full precision, both zeros, and whole milliseconds above LatencyCounts::max_ms.
double mixed_latency(Rng& rng, int i) {
  const double u = rng.uniform();
  switch (i % 8) {
    case 0:
    case 1:
    case 2:
      return std::round(u * 5000) / 1000;
    case 3:
      return std::round(u * 500) / 100;
    case 4:
      return std::round(u * 5e6) / 1e6;
    case 5:
      return u * 5;
    case 6:
      return i % 16 == 6 ? -0.0 : 0.0;
    default:
      return std::round((300 + u * 1000) * 1000) / 1000;
  }
}
}  // namespace

TEST_CASE("latency counts give the sorted array's percentiles bit for bit, whole milliseconds or not",
          "[experiments][stats]") {
  Rng rng(13);
  for (const int n : {1, 2, 7, 1000, 50000}) {
    std::vector<double> values;
    LatencyCounts whole, part_a, part_b;
    for (int i = 0; i < n; ++i) {
      const double v = mixed_latency(rng, i);
      values.push_back(v);
      whole.add(v);
      (i % 3 == 0 ? part_a : part_b).add(v);
    }
    part_a.merge(part_b);
    // The reference order is total (-0 before +0), as LatencyCounts keeps it.
    std::sort(values.begin(), values.end(), [](double a, double b) { return std::strong_order(a, b) < 0; });
    const std::vector<double> qs = {0, 0.1, 12.5, 50, 95, 99, 99.99, 100};
    for (const LatencyCounts* counts : {&whole, &part_a}) {
      REQUIRE(counts->size() == values.size());
      const SortedCounts sorted = counts->sorted();
      REQUIRE(sorted.size() == values.size());
      for (std::size_t r = 0; r < values.size(); r += 1 + values.size() / 97)
        REQUIRE(std::bit_cast<std::uint64_t>(sorted.at(r)) == std::bit_cast<std::uint64_t>(values[r]));
      const auto got = percentiles_by_rank(sorted.size(), qs, [&](std::size_t r) { return sorted.at(r); });
      for (std::size_t k = 0; k < qs.size(); ++k)
        CHECK(std::bit_cast<std::uint64_t>(got[k]) ==
              std::bit_cast<std::uint64_t>(percentile_sorted(values, qs[k])));
      for (const double limit : {-1.0, 0.0, 0.001, 2.5, 2.5000001, 4.999, 300.0, 1e9}) {
        const auto expected =
            std::count_if(values.begin(), values.end(), [&](double v) { return v <= limit; });
        CHECK(sorted.count_at_most(limit) == static_cast<std::size_t>(expected));
      }
    }
  }
}

TEST_CASE("empty latency counts hold nothing and give NaN percentiles", "[experiments][stats]") {
  const SortedCounts sorted = LatencyCounts{}.sorted();
  CHECK(sorted.size() == 0);
  CHECK(sorted.count_at_most(1e9) == 0);
  const std::vector<double> qs = {50};
  CHECK(std::isnan(percentiles_by_rank(0, qs, [&](std::size_t r) { return sorted.at(r); })[0]));
}
