// The shape of one column-major GEMM, D (m x n) = op(A) (m x k) * op(B) (k x n) [+ C (m x n)]:
// the one shape vocabulary shared by our own kernels, the reference, the cuBLASLt spec
// (GemmSpec holds one) and the benchmarks.
#pragma once

#include <cstdint>
#include <string>

namespace tcbench {

struct GemmProblem {
  std::int64_t m = 0, n = 0, k = 0;
  bool trans_a = false;  // A stored k x m (the "T" of "TN")
  bool trans_b = false;  // B stored n x k
  // Leading dimensions (column-major: at least the stored rows); 0 = the tightest legal value.
  std::int64_t lda = 0, ldb = 0, ldc = 0, ldd = 0;

  std::int64_t a_rows() const { return trans_a ? k : m; }
  std::int64_t a_cols() const { return trans_a ? m : k; }
  std::int64_t b_rows() const { return trans_b ? n : k; }
  std::int64_t b_cols() const { return trans_b ? k : n; }
  std::int64_t effective_lda() const { return lda != 0 ? lda : a_rows(); }
  std::int64_t effective_ldb() const { return ldb != 0 ? ldb : b_rows(); }
  std::int64_t effective_ldd() const { return ldd != 0 ? ldd : m; }
  std::int64_t effective_ldc() const { return ldc != 0 ? ldc : effective_ldd(); }

  // The first problem with the shape, as a sentence ("m=0 must be positive", "ldd=10 is smaller
  // than the 16 rows of D"), or empty when the shape is valid. The one place that checks them.
  std::string why_invalid() const;
  // Fills zero leading dimensions; throws InvalidArgument with why_invalid()'s sentence.
  GemmProblem& resolve();

  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
  std::string describe() const;  // "m=257 n=259 k=263 NN lda=257 ldb=263 ldd=257"
};

}  // namespace tcbench
