#include "tcbench/numerics/order_statistics.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace tcbench::numerics {

double percentile_of_sorted(std::span<const double> sorted, double q) {
  if (sorted.empty()) throw std::invalid_argument("percentile_of_sorted: no values");
  const double pos = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  const double frac = pos - static_cast<double>(lo);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

double median(std::vector<double> values) {
  if (values.empty()) throw std::invalid_argument("median: no values");
  std::sort(values.begin(), values.end());
  return percentile_of_sorted(values, 0.5);
}

}  // namespace tcbench::numerics
