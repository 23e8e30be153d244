#include "tcbench/numerics/formats.hpp"

namespace tcbench::numerics {

float amax(std::span<const float> xs) {
  float acc = 0.0f;
  for (float x : xs) acc = amax_step(acc, x);
  return acc;
}

}  // namespace tcbench::numerics
