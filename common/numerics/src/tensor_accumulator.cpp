#include "tcbench/numerics/tensor_accumulator.hpp"

#include <cmath>
#include <stdexcept>
#include <string>

namespace tcbench::numerics {

std::optional<std::string> why_invalid(const AccumulatorModel& m) {
  if (m.fraction_bits < 0 || m.fraction_bits > 40)
    return "an accumulator model keeps 0 to 40 fraction bits, not " +
           std::to_string(m.fraction_bits);
  if (m.block < 1)
    return "an accumulator model adds at least one product per step, not " +
           std::to_string(m.block);
  if (m.promotion < 0 || (m.promotion > 0 && m.promotion % m.block != 0))
    return "promotion every " + std::to_string(m.promotion) +
           " products is not a multiple of the model's step of " + std::to_string(m.block);
  return std::nullopt;
}

double aligned_truncated_sum(std::span<const double> addends, int fraction_bits) {
  if (fraction_bits < 0 || fraction_bits > 40)
    throw std::invalid_argument("aligned_truncated_sum: fraction_bits must be in [0, 40], got " +
                                std::to_string(fraction_bits));
  const auto n = static_cast<int>(addends.size());
  return accumulate_step(
      0.0, [&](int i) { return addends[static_cast<std::size_t>(i)]; }, 0, n, fraction_bits,
      AccRounding::truncate);
}

double exact_check_limit(int fraction_bits) {
  return std::ldexp(1.0, fraction_bits);
}

}  // namespace tcbench::numerics
