#include "tcbench/numerics/tensor_accumulator.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace tcbench::numerics {
namespace {

// The weight of the lowest fraction bit kept when `largest` (> 0) sets the exponent.
double lowest_bit(double largest, int fraction_bits) {
  int e = 0;
  std::frexp(largest, &e);  // largest = m * 2^e, m in [0.5, 1): its leading bit is 2^(e - 1)
  return std::ldexp(1.0, e - 1 - fraction_bits);
}

double truncate_to(double x, double bit) {
  return std::trunc(x / bit) * bit;  // a power of two: exact in double
}

}  // namespace

double aligned_truncated_sum(std::span<const double> addends, int fraction_bits) {
  if (fraction_bits < 0 || fraction_bits > 40)
    throw std::invalid_argument("aligned_truncated_sum: fraction_bits must be in [0, 40], got " +
                                std::to_string(fraction_bits));
  double largest = 0;
  for (double x : addends) largest = std::max(largest, std::fabs(x));
  if (largest == 0) return 0;
  const double bit = lowest_bit(largest, fraction_bits);
  double sum = 0;
  for (double x : addends) sum += truncate_to(x, bit);
  if (sum == 0) return 0;
  return truncate_to(sum, lowest_bit(std::fabs(sum), fraction_bits));
}

double exact_check_limit(int fraction_bits) {
  return std::ldexp(1.0, fraction_bits);
}

}  // namespace tcbench::numerics
