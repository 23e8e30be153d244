// One spelling for "callable from host and device", so the numerics headers compile unchanged
// under g++ (host library, host tests) and nvcc (kernels), and kernels call exactly the code the
// host tests check.
#pragma once

#include <cfloat>
#include <cmath>

#if defined(__CUDACC__)
#define TCB_HD __host__ __device__
#else
#define TCB_HD
#endif

namespace tcbench::numerics {

// std::isfinite/std::isnan are not guaranteed to be device functions; comparisons are, and they
// give the IEEE answer (NaN compares false with everything, |inf| > FLT_MAX).
TCB_HD inline bool is_finite(float x) {
  return fabsf(x) <= FLT_MAX;
}
TCB_HD inline bool is_nan(float x) {
  return x != x;
}

// ceil(a / b) for positive integers, in a's type: grid sizes, tile and wave counts. The one
// spelling.
template <typename T, typename U>
TCB_HD constexpr T ceil_div(T a, U b) {
  return (a + static_cast<T>(b) - 1) / static_cast<T>(b);
}

}  // namespace tcbench::numerics
