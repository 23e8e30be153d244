#include "tcbench/verify.hpp"

#include "tcbench/error.hpp"
#include "tcbench/gemm_spec.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

namespace tcbench {

double VerifyStats::rel_error() const {
  if (nonfinite > 0 || checked == 0) return std::numeric_limits<double>::infinity();
  if (sum_sq_ref == 0.0) return sum_sq_diff == 0.0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(sum_sq_diff / sum_sq_ref);
}

VerifyStats& VerifyStats::merge(const VerifyStats& o) {
  sum_sq_diff += o.sum_sq_diff;
  sum_sq_ref += o.sum_sq_ref;
  nonfinite += o.nonfinite;
  checked += o.checked;
  elem_violations += o.elem_violations;
  max_elem_ratio = std::max(max_elem_ratio, o.max_elem_ratio);
  return *this;
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

namespace {

// The accumulator's unit roundoff, from the compute type and the input type.
double accumulator_roundoff(cublasComputeType_t compute, cudaDataType_t input) {
  switch (compute) {
    case CUBLAS_COMPUTE_64F:
    case CUBLAS_COMPUTE_64F_PEDANTIC:
      return unit_roundoff(CUDA_R_64F);
    case CUBLAS_COMPUTE_16F:
    case CUBLAS_COMPUTE_16F_PEDANTIC:
      return unit_roundoff(CUDA_R_16F);
    default:
      // FP8 tensor cores accumulate in about 14 bits, not FP32 (DeepSeek-V3 technical report,
      // arXiv:2412.19437, section 3.3.2: "limited to retaining around 14 bits"). No source
      // states the block-scaled FP4/FP6 accumulator's width, so they get the same model.
      return is_narrow_type(input) ? 0x1p-14 : unit_roundoff(CUDA_R_32F);  // not a format limit
  }
}

// The re-rounding of FP32 inputs inside the tensor core that a FAST compute type asks for.
double input_roundoff(cublasComputeType_t compute) {
  switch (compute) {
    case CUBLAS_COMPUTE_32F_FAST_TF32:
      // A 10-bit mantissa, rounded or truncated: TF32's epsilon, not its unit roundoff.
      return numerics::element_info(numerics::Element::tf32).epsilon;
    case CUBLAS_COMPUTE_32F_FAST_16F:
      return unit_roundoff(CUDA_R_16F);
    case CUBLAS_COMPUTE_32F_FAST_16BF:
      return unit_roundoff(CUDA_R_16BF);
    default:
      return 0.0;
  }
}

}  // namespace

ErrorModel error_model(Precision p, std::int64_t k, std::optional<cudaDataType_t> d_type,
                       bool fast_accum) {
  // The reference sees the same rounded inputs as the GEMM, so the error is accumulation,
  // output rounding and any re-rounding of inputs inside the tensor core. Rounding errors of a
  // sum of K terms behave like a random walk (Higham & Mary, SIAM J. Sci. Comput. 2019), so the
  // accumulation contributes sqrt(roundings) u_acc relative to the result; the Frobenius
  // tolerance is 3x the model and the per-element one 4x (relative to sum |a||b|), so a correct
  // GEMM passes and a wrong one does not: dropping one 128-deep K tile gives a relative error of
  // sqrt(128 / K) (0.088 at K = 16384), above every tolerance here (the host test
  // Verify.DroppedKTileFailsAtEveryPrecision holds this).
  //
  // Every unit roundoff follows from the types of p's row (or the given output type), so a row
  // of the precision table cannot contradict its own model:
  //   - u_out: the output type's unit roundoff (unit_roundoff(d));
  //   - u_acc: the compute type's accumulator (FP64, FP16 or FP32; FP8 inputs: about 14 bits);
  //   - u_in: the re-rounding a FAST compute type asks for (TF32's 10-bit mantissa);
  //   - roundings: FP16 accumulation rounds once per HMMA k-step (m16n8k16 adds 16 products
  //     inside the tensor core), so K/16, not K (K gave 0.19 at K = 16384, which let a dropped
  //     tile pass). FP8 with split accumulation promotes partial sums to FP32 every 128 K (the
  //     interval DeepSeek-V3 and DeepGEMM use; cuBLAS does not document its own), so at most
  //     128 roundings at 14 bits; fast accumulation keeps all K in the tensor core.
  if (k <= 0) throw InvalidArgument("tolerance: k = " + std::to_string(k) + " must be positive");
  const PrecisionInfo& row = info(p);
  ErrorModel e;
  if (row.integer) {
    e.exact = true;
    return e;
  }
  const auto kd = static_cast<double>(k);
  e.u_out = unit_roundoff(d_type.value_or(row.d));
  e.u_acc = accumulator_roundoff(row.compute, row.a);
  e.u_in = input_roundoff(row.compute);
  e.roundings = kd;
  if (row.compute == CUBLAS_COMPUTE_16F) e.roundings = std::max(1.0, std::ceil(kd / 16.0));
  // Block scales also bound the promotion interval: every block of at most 128 K is scaled
  // before it is added.
  if (is_narrow_type(row.a) && !fast_accum) e.roundings = std::min(kd, 128.0);
  return e;
}

double unit_roundoff(cudaDataType_t t) {
  // Integers: 0, exact or saturated, which the caller's model must say.
  const auto e = numerics::find_element(t);
  return e ? numerics::element_info(*e).unit_roundoff : 0.0;
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
