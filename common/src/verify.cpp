#include "tcbench/verify.hpp"

#include "tcbench/error.hpp"

#include <algorithm>
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
  return nonfinite == 0 && checked > 0 && elem_violations == 0 && std::isfinite(e) && e <= tol;
}

std::string VerifyStats::describe(double tol) const {
  char buf[256];
  std::snprintf(buf, sizeof buf,
                "rel. error %.3e (tolerance %.1e), %llu non-finite, %llu outside the per-element "
                "bound (worst %.2e of sum|a||b|) of %llu checked",
                rel_error(), tol, static_cast<unsigned long long>(nonfinite),
                static_cast<unsigned long long>(elem_violations), max_elem_ratio,
                static_cast<unsigned long long>(checked));
  return buf;
}

ErrorModel error_model(Precision p, std::int64_t k) {
  // The reference sees the same rounded inputs as the GEMM, so the error is accumulation,
  // output rounding and any re-rounding of inputs inside the tensor core. Rounding errors of a
  // sum of K terms behave like a random walk (Higham & Mary, SIAM J. Sci. Comput. 2019), so the
  // accumulation contributes sqrt(roundings) u_acc relative to the result; the Frobenius
  // tolerance is 3x the model and the per-element one 4x (relative to sum |a||b|), so a correct
  // GEMM passes and a wrong one does not: dropping one 128-deep K tile gives a relative error of
  // sqrt(128 / K) (0.088 at K = 16384), above every tolerance here (the host test
  // Verify.DroppedKTileFailsAtEveryPrecision holds this).
  // FP16 accumulation: an HMMA instruction (m16n8k16) adds its 16 products inside the tensor
  // core and rounds the FP16 accumulator once, so there are K/16 roundings, not K. Modelling K
  // roundings (as before) gave 0.19 at K = 16384, which let a dropped tile pass.
  if (k <= 0) throw InvalidArgument("tolerance: k = " + std::to_string(k) + " must be positive");
  const double u_fp64 = 0x1p-53, u_fp32 = 0x1p-24, u_half = 0x1p-11, u_bf16 = 0x1p-8;
  const auto kd = static_cast<double>(k);
  ErrorModel e;
  e.u_acc = u_fp32;
  e.roundings = kd;
  switch (p) {
    case Precision::fp64:
      e.u_acc = e.u_out = u_fp64;
      break;
    case Precision::fp32:
      e.u_out = u_fp32;
      break;
    case Precision::tf32:
      e.u_out = u_fp32;
      e.u_in = 2 * u_half;  // 10-bit mantissa inputs
      break;
    case Precision::fp16:
      e.u_out = u_half;
      break;
    case Precision::bf16:
      e.u_out = u_bf16;
      break;
    case Precision::fp16_acc16:
      e.u_acc = e.u_out = u_half;
      e.roundings = std::max(1.0, std::ceil(kd / 16.0));
      break;
    case Precision::int8:
      e = ErrorModel{};
      e.exact = true;
      break;
    case Precision::fp8:
      e.u_out = u_bf16;  // integer-valued inputs make the products exact; BF16 output
      break;
  }
  return e;
}

double unit_roundoff(cudaDataType_t t) {
  switch (t) {
    case CUDA_R_32F:
      return 0x1p-24;
    case CUDA_R_16F:
      return 0x1p-11;
    case CUDA_R_16BF:
      return 0x1p-8;
    case CUDA_R_8F_E4M3:
      return 0x1p-4;
    case CUDA_R_8F_E5M2:
      return 0x1p-3;
    case CUDA_R_64F:
      return 0x1p-53;
    default:
      return 0.0;  // integers: exact, or saturated, which the caller's model must say
  }
}

double tolerance(Precision p, std::int64_t k) {
  return error_model(p, k).frobenius_tolerance();
}

VerifyStats compare_host(std::span<const double> reference, std::span<const double> result,
                         std::span<const double> abs_reference, double element_tolerance) {
  if (reference.size() != result.size() ||
      (!abs_reference.empty() && abs_reference.size() != reference.size()))
    throw InvalidArgument("compare_host: reference has " + std::to_string(reference.size()) +
                          " elements, result " + std::to_string(result.size()) +
                          ", abs_reference " + std::to_string(abs_reference.size()));
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
    if (!abs_reference.empty()) {
      const double bound = element_tolerance * abs_reference[i];
      if (std::fabs(diff) > bound) ++s.elem_violations;
      if (abs_reference[i] > 0)
        s.max_elem_ratio = std::max(s.max_elem_ratio, std::fabs(diff) / abs_reference[i]);
    }
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
