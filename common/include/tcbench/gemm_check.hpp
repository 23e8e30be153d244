// Verify-before-timing for any GEMM: poison the output, run once, compare sampled rows with the
// FP64 reference. Shared by every topic that times a GEMM.
#pragma once

#include "tcbench/cuda_owners.hpp"
#include "tcbench/gemm_lt.hpp"
#include "tcbench/gemm_problem.hpp"
#include "tcbench/reference_gemm.hpp"
#include "tcbench/verify.hpp"

#include <cstdint>
#include <functional>

namespace tcbench {

// The GemmProblem (shape, ops, lds) that a cuBLASLt spec computes, for the reference.
inline GemmProblem to_problem(const GemmSpec& s) {
  GemmProblem p;
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.trans_a = s.trans_a != CUBLAS_OP_N;
  p.trans_b = s.trans_b != CUBLAS_OP_N;
  p.lda = s.effective_lda();
  p.ldb = s.effective_ldb();
  p.ldd = s.effective_ldd();
  return p.resolve();
}

// How many output rows verification checks: every row of small problems, an even sample of large
// ones, so checking a 16384^3 GEMM costs a fraction of a second.
inline constexpr std::int64_t kVerifyRows = 256;

// Poisons d, runs `run` once on `stream`, and compares rows of d with the FP64 reference of
// op(A) * op(B). The caller decides pass/fail with tolerance(precision, k).
template <typename TA, typename TB, typename TD>
VerifyStats verify_gemm(const GemmProblem& p, const TA* a, const TB* b, TD* d,
                        const std::function<void(cudaStream_t)>& run, cudaStream_t stream,
                        std::int64_t max_rows = kVerifyRows) {
  const std::vector<std::int64_t> rows = sample_rows(p.m, max_rows);
  const auto nrows = static_cast<std::int64_t>(rows.size());
  DeviceBuffer<std::int64_t> rows_dev(rows.size());
  rows_dev.upload(rows, stream);
  DeviceBuffer<double> ref(checked_elements(nrows, p.n));
  reference_gemm_rows(p, a, b, rows_dev.get(), nrows, ref.get(), stream);
  poison(d, checked_bytes<TD>(static_cast<std::size_t>(p.ldd) * static_cast<std::size_t>(p.n)),
         stream);
  run(stream);
  TCB_CUDA_CTX(cudaStreamSynchronize(stream), "running the GEMM under test, " + p.describe());
  return compare_rows_device(d, p.ldd, rows_dev.get(), nrows, p.n, ref.get(), stream);
}

}  // namespace tcbench
