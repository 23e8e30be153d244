#include "tcbench/cuda_owners.hpp"

namespace tcbench {

std::size_t checked_elements(std::int64_t rows, std::int64_t cols) {
  if (rows <= 0 || cols <= 0)
    throw InvalidArgument("matrix of " + std::to_string(rows) + " x " + std::to_string(cols) +
                          ": both dimensions must be positive");
  const auto r = static_cast<std::uint64_t>(rows), c = static_cast<std::uint64_t>(cols);
  if (r > std::numeric_limits<std::size_t>::max() / c)
    throw InvalidArgument("matrix of " + std::to_string(rows) + " x " + std::to_string(cols) +
                          " elements overflows size_t");
  return static_cast<std::size_t>(r * c);
}

}  // namespace tcbench
