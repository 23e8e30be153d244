// The higher-precision reference every GEMM is checked against: FP64 accumulation of the
// same (already rounded) inputs the GEMM under test sees.
#pragma once

#include "tcbench/gemm_problem.hpp"
#include "tcbench/verify.hpp"

#include <library_types.h>

#include <cstdint>
#include <span>
#include <vector>

namespace tcbench {

template <typename T>
TCB_HD inline double element_a(const GemmProblem& p, const T* a, std::int64_t i, std::int64_t l) {
  return to_double(p.trans_a ? a[l + i * p.lda] : a[i + l * p.lda]);
}
template <typename T>
TCB_HD inline double element_b(const GemmProblem& p, const T* b, std::int64_t l, std::int64_t j) {
  return to_double(p.trans_b ? b[j + l * p.ldb] : b[l + j * p.ldb]);
}

// Host reference: the full m x n result, column-major (leading dimension m). For tests. With
// `abs_out`, also sum_l |A_il B_lj| per element (the per-element error bound's scale).
template <typename TA, typename TB>
std::vector<double> reference_gemm_host(const GemmProblem& p, std::span<const TA> a,
                                        std::span<const TB> b,
                                        std::vector<double>* abs_out = nullptr) {
  std::vector<double> d(static_cast<std::size_t>(p.m * p.n));
  if (abs_out) abs_out->assign(d.size(), 0.0);
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = 0; i < p.m; ++i) {
      double acc = 0.0, abs_acc = 0.0;
      for (std::int64_t l = 0; l < p.k; ++l) {
        const double prod = element_a(p, a.data(), i, l) * element_b(p, b.data(), l, j);
        acc += prod;
        abs_acc += std::fabs(prod);
      }
      d[static_cast<std::size_t>(i + j * p.m)] = acc;
      if (abs_out) (*abs_out)[static_cast<std::size_t>(i + j * p.m)] = abs_acc;
    }
  return d;
}

// The most rows one device reference pass handles: all sampled rows live in one block's shared
// memory, so B is read from DRAM exactly once however many rows are checked.
inline constexpr std::int64_t kMaxReferenceRows = 256;

// Device reference for the rows listed in `rows` (device array, nrows <= kMaxReferenceRows
// entries) of a resolved problem: out[r + j * nrows] = sum_l A(rows[r], l) * B(l, j) and
// abs_out[...] = sum_l |A(rows[r], l) * B(l, j)|, in FP64. A and B are typed by a_type and
// b_type (the pairs tcbench's GEMMs use: equal types, or mixed FP8). Asynchronous on `stream`.
void reference_gemm_rows(const GemmProblem& p, cudaDataType_t a_type, const void* a,
                         cudaDataType_t b_type, const void* b, const std::int64_t* rows,
                         std::int64_t nrows, double* out, double* abs_out, cudaStream_t stream);

}  // namespace tcbench
