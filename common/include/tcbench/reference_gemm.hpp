// The higher-precision reference every GEMM is checked against: FP64 accumulation of the
// same (already rounded) inputs the GEMM under test sees.
#pragma once

#include "tcbench/gemm_problem.hpp"
#include "tcbench/verify.hpp"

#include <cstdint>
#include <span>
#include <vector>

namespace tcbench {

template <typename T>
__host__ __device__ inline double element_a(const GemmProblem& p, const T* a, std::int64_t i,
                                            std::int64_t l) {
  return to_double(p.trans_a ? a[l + i * p.lda] : a[i + l * p.lda]);
}
template <typename T>
__host__ __device__ inline double element_b(const GemmProblem& p, const T* b, std::int64_t l,
                                            std::int64_t j) {
  return to_double(p.trans_b ? b[j + l * p.ldb] : b[l + j * p.ldb]);
}

// Host reference: the full m x n result, column-major (leading dimension m). For tests.
template <typename TA, typename TB>
std::vector<double> reference_gemm_host(const GemmProblem& p, std::span<const TA> a,
                                        std::span<const TB> b) {
  std::vector<double> d(static_cast<std::size_t>(p.m * p.n));
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = 0; i < p.m; ++i) {
      double acc = 0.0;
      for (std::int64_t l = 0; l < p.k; ++l)
        acc += element_a(p, a.data(), i, l) * element_b(p, b.data(), l, j);
      d[static_cast<std::size_t>(i + j * p.m)] = acc;
    }
  return d;
}

// Device reference for the rows listed in `rows` (device array, nrows entries): writes
// out[r + j * nrows] = sum_l A(rows[r], l) * B(l, j) in FP64. Asynchronous on `stream`.
template <typename TA, typename TB>
void reference_gemm_rows(const GemmProblem& p, const TA* a, const TB* b, const std::int64_t* rows,
                         std::int64_t nrows, double* out, cudaStream_t stream);

}  // namespace tcbench
