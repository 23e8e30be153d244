#include "tcbench/gemm_problem.hpp"

#include "tcbench/error.hpp"

namespace tcbench {

GemmProblem& GemmProblem::resolve() {
  if (m <= 0 || n <= 0 || k <= 0)
    throw InvalidArgument("GEMM sizes must be positive, got m=" + std::to_string(m) +
                          " n=" + std::to_string(n) + " k=" + std::to_string(k));
  if (lda == 0) lda = a_rows();
  if (ldb == 0) ldb = b_rows();
  if (ldd == 0) ldd = m;
  if (lda < a_rows() || ldb < b_rows() || ldd < m)
    throw InvalidArgument("leading dimension too small for " + describe() +
                          ": need lda >= " + std::to_string(a_rows()) +
                          ", ldb >= " + std::to_string(b_rows()) + ", ldd >= " + std::to_string(m));
  return *this;
}

std::string GemmProblem::describe() const {
  return "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " " +
         (trans_a ? "T" : "N") + (trans_b ? "T" : "N") + " lda=" + std::to_string(lda) +
         " ldb=" + std::to_string(ldb) + " ldd=" + std::to_string(ldd);
}

}  // namespace tcbench
