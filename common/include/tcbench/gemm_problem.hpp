// The shape of one column-major GEMM, D (m x n) = op(A) (m x k) * op(B) (k x n), shared by our own
// kernels, the reference and the benchmarks. cuBLASLt specs live in gemm_lt.hpp.
#pragma once

#include <cstdint>
#include <string>

namespace tcbench {

struct GemmProblem {
  std::int64_t m = 0, n = 0, k = 0;
  bool trans_a = false;                    // A stored k x m (the "T" of "TN")
  bool trans_b = false;                    // B stored n x k
  std::int64_t lda = 0, ldb = 0, ldd = 0;  // 0 = tightest legal value

  // Fills zero leading dimensions and throws InvalidArgument, naming the values, for non-positive
  // sizes or leading dimensions that are too small.
  GemmProblem& resolve();
  std::int64_t a_rows() const { return trans_a ? k : m; }
  std::int64_t a_cols() const { return trans_a ? m : k; }
  std::int64_t b_rows() const { return trans_b ? n : k; }
  std::int64_t b_cols() const { return trans_b ? k : n; }
  double flops() const {
    return 2.0 * static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  }
  std::string describe() const;  // "m=257 n=259 k=263 NN lda=257 ldb=263 ldd=257"
};

}  // namespace tcbench
