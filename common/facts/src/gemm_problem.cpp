#include "tcbench/gemm_problem.hpp"

#include "tcbench/error.hpp"

namespace tcbench {

std::string GemmProblem::why_invalid() const {
  const std::string dims =
      "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k);
  if (m <= 0 || n <= 0 || k <= 0) return "m, n and k must be positive; got " + dims + ".";
  struct Ld {
    const char* name;
    std::int64_t ld, rows;
    const char* what;
  };
  const std::string a_shape = trans_a ? "k x m (A transposed)" : "m x k";
  const std::string b_shape = trans_b ? "n x k (B transposed)" : "k x n";
  const Ld lds[] = {{"lda", effective_lda(), a_rows(), "A"},
                    {"ldb", effective_ldb(), b_rows(), "B"},
                    {"ldc", effective_ldc(), m, "C"},
                    {"ldd", effective_ldd(), m, "D"}};
  for (const Ld& l : lds) {
    if (l.ld < l.rows) {
      const std::string shape = l.what[0] == 'A' ? a_shape : l.what[0] == 'B' ? b_shape : "m x n";
      return std::string(l.name) + "=" + std::to_string(l.ld) + " is smaller than the " +
             std::to_string(l.rows) + " rows of " + l.what + " as stored (" + shape + ", " + dims +
             ").";
    }
  }
  return {};
}

GemmProblem& GemmProblem::resolve() {
  if (const std::string why = why_invalid(); !why.empty())
    throw InvalidArgument("invalid GEMM shape: " + why);
  lda = effective_lda();
  ldb = effective_ldb();
  ldd = effective_ldd();
  ldc = effective_ldc();
  return *this;
}

std::string GemmProblem::describe() const {
  return "m=" + std::to_string(m) + " n=" + std::to_string(n) + " k=" + std::to_string(k) + " " +
         (trans_a ? "T" : "N") + (trans_b ? "T" : "N") + " lda=" + std::to_string(effective_lda()) +
         " ldb=" + std::to_string(effective_ldb()) + " ldd=" + std::to_string(effective_ldd());
}

}  // namespace tcbench
