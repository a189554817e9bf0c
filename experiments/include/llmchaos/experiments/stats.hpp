#pragma once
// Percentiles as numpy computes them by default (method "linear", numpy >= 1.22; "interpolation" before):
// for n sorted values a[0..n-1] and a percentile p in [0, 100], the virtual index is h = (n - 1) * p / 100;
// with i = floor(h) and g = h - i the result is a[i] + (a[i+1] - a[i]) * g (linear interpolation
// between the two closest ranks; a[n-1] when i = n - 1). numpy evaluates the interpolation as
// b - (b - a) * (1 - g) when g >= 0.5; we do the same, so results match numpy to the last bit.
#include <span>
#include <vector>

namespace llmchaos::experiments {

// Percentile of already sorted values. NaN for an empty span.
double percentile_sorted(std::span<const double> sorted, double percent);

// Several percentiles of unsorted values in O(n) (a histogram selection for large inputs, nth_element
// otherwise); may reorder `values`.
// `percents` may be in any order; results are in the same order. NaN for each when `values` is empty.
std::vector<double> percentiles(std::span<double> values, std::span<const double> percents);

}  // namespace llmchaos::experiments
