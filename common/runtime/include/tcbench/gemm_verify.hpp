// Verify-before-timing for any GEMM: poison the output, run once, compare sampled rows with the
// FP64 reference. Shared by the benchmark harness and the device tests.
#pragma once

#include "tcbench/gemm_problem.hpp"
#include "tcbench/gemm_types.hpp"
#include "tcbench/verify.hpp"

#include <cuda_runtime_api.h>
#include <library_types.h>

#include <cstdint>
#include <functional>
#include <vector>

namespace tcbench {

// How many output rows verification checks: every row of small problems, an even sample of large
// ones (always the first and last), so checking a 16384^3 GEMM costs milliseconds.
inline constexpr std::int64_t kVerifyRows = 256;

struct GemmOutputCheck {
  GemmProblem problem;  // resolved (leading dimensions filled)
  cudaDataType_t a_type = CUDA_R_32F, b_type = CUDA_R_32F, d_type = CUDA_R_32F;
  const void* a = nullptr;
  const void* b = nullptr;
  void* d = nullptr;
  double scale = 1.0;  // the GEMM computes D = scale * op(A) op(B) (alpha, FP8 tensor scales)
  std::int64_t max_rows = kVerifyRows;
  // A strided batch: batch_count matrices, matrix i of A at a + i * stride_a elements (likewise
  // B and D). Strides of 0 mean packed matrices (ld x columns), as in GemmSpec.
  std::int32_t batch_count = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_d = 0;
};

// The matrices of a batch of `batch_count` that verification checks: the first and the last
// (where a wrong stride or a missing matrix shows first), once each.
std::vector<std::int32_t> checked_matrices(std::int32_t batch_count);

// Poisons D (every matrix of a batch), runs `run` once on `stream`, and compares the sampled
// rows of D (of each checked_matrices() matrix) with the FP64 reference: Frobenius error and the
// per-element bound `element_tolerance` * sum |A||B|, merged over the checked matrices. The
// caller decides pass/fail with the Frobenius tolerance.
VerifyStats verify_gemm(const GemmOutputCheck& check, const std::function<void(cudaStream_t)>& run,
                        double element_tolerance, cudaStream_t stream);

// Typed convenience for tests.
template <typename TA, typename TB, typename TD>
VerifyStats verify_gemm(const GemmProblem& p, const TA* a, const TB* b, TD* d,
                        const std::function<void(cudaStream_t)>& run, double element_tolerance,
                        cudaStream_t stream) {
  GemmOutputCheck c;
  c.problem = p;
  c.a_type = cuda_data_type_v<TA>;
  c.b_type = cuda_data_type_v<TB>;
  c.d_type = cuda_data_type_v<TD>;
  c.a = a;
  c.b = b;
  c.d = d;
  return verify_gemm(c, run, element_tolerance, stream);
}

}  // namespace tcbench
