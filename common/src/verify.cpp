#include "tcbench/verify.hpp"

#include "tcbench/error.hpp"

#include <cstdio>
#include <limits>

namespace tcbench {

double VerifyStats::rel_error() const {
  if (nonfinite > 0 || checked == 0) return std::numeric_limits<double>::infinity();
  if (sum_sq_ref == 0.0) return sum_sq_diff == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(sum_sq_diff / sum_sq_ref);
}

bool VerifyStats::passes(double tol) const {
  const double e = rel_error();
  return nonfinite == 0 && checked > 0 && std::isfinite(e) && e <= tol;
}

std::string VerifyStats::describe(double tol) const {
  char buf[200];
  std::snprintf(buf, sizeof buf,
                "rel. error %.3e (tolerance %.1e), %llu non-finite of %llu checked", rel_error(),
                tol, static_cast<unsigned long long>(nonfinite),
                static_cast<unsigned long long>(checked));
  return buf;
}

double tolerance(Precision p, std::int64_t k) {
  // The reference sees the same rounded inputs as the GEMM, so the error is accumulation,
  // output rounding and any re-rounding of inputs inside the tensor core. With unit roundoffs
  // u_acc (accumulator), u_out (output) and u_in (tf32 re-rounding), a random-walk sum of K terms
  // has relative error about sqrt(K) u_acc + u_out + u_in; the tolerance is 3x that bound, so a
  // correct GEMM passes and a wrong one (a skipped K tile, a transposed operand: errors of order
  // 1/sqrt(tiles) or more) does not. INT8 with int32 accumulation is exact.
  if (k <= 0) throw InvalidArgument("tolerance: k = " + std::to_string(k) + " must be positive");
  const double u_fp64 = 0x1p-53, u_fp32 = 0x1p-24, u_half = 0x1p-11, u_bf16 = 0x1p-8;
  double u_acc = u_fp32, u_out = 0.0, u_in = 0.0;
  switch (p) {
    case Precision::fp64:
      u_acc = u_out = u_fp64;
      break;
    case Precision::fp32:
      u_out = u_fp32;
      break;
    case Precision::tf32:
      u_out = u_fp32;
      u_in = 2 * u_half;
      break;  // 10-bit mantissa inputs
    case Precision::fp16:
      u_out = u_half;
      break;
    case Precision::bf16:
      u_out = u_bf16;
      break;
    case Precision::fp16_acc16:
      u_acc = u_out = u_half;
      break;
    case Precision::int8:
      return 0.0;
    case Precision::fp8:
      u_out = u_bf16;
      break;  // integer-valued inputs, bf16 output
  }
  return 3.0 * (std::sqrt(static_cast<double>(k)) * u_acc + u_out + u_in);
}

VerifyStats compare_host(std::span<const double> reference, std::span<const double> result) {
  if (reference.size() != result.size())
    throw InvalidArgument("compare_host: reference has " + std::to_string(reference.size()) +
                          " elements, result " + std::to_string(result.size()));
  VerifyStats s;
  for (std::size_t i = 0; i < reference.size(); ++i) {
    ++s.checked;
    if (!std::isfinite(result[i])) {
      ++s.nonfinite;
      continue;
    }
    const double diff = result[i] - reference[i];
    s.sum_sq_diff += diff * diff;
    s.sum_sq_ref += reference[i] * reference[i];
  }
  return s;
}

std::vector<std::int64_t> sample_rows(std::int64_t m, std::int64_t max_rows) {
  if (m <= 0 || max_rows <= 0)
    throw InvalidArgument("sample_rows: m = " + std::to_string(m) +
                          " and max_rows = " + std::to_string(max_rows) + " must be positive");
  std::vector<std::int64_t> rows;
  if (m <= max_rows) {
    for (std::int64_t r = 0; r < m; ++r) rows.push_back(r);
    return rows;
  }
  if (max_rows == 1) return {m - 1};
  for (std::int64_t j = 0; j < max_rows; ++j) rows.push_back(j * (m - 1) / (max_rows - 1));
  return rows;
}

}  // namespace tcbench
