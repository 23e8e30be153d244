// Verification: every result is compared with a higher-precision reference before it is timed.
//
// Two measures, both must pass:
//   - the relative Frobenius error ||D - R||_F / ||R||_F over the checked elements, against the
//     precision's error model (a random-walk bound on accumulation and output rounding);
//   - a per-element bound |D_ij - R_ij| <= tol_e * sum_l |A_il B_lj| (Higham & Mary's
//     probabilistic dot-product bound), so an error confined to one tile of the output cannot
//     hide in the aggregate.
// Any NaN or Inf in D fails, whatever the norms say. Outputs are poisoned (all bytes 0xFF: NaN
// for every float format, -1 for integers) before the run that is checked, so an output the
// kernel never wrote cannot pass.
#pragma once

#include "tcbench/numerics/host_device.hpp"
#include "tcbench/precision.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>
#include <library_types.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace tcbench {

struct VerifyStats {
  double sum_sq_diff = 0.0;
  double sum_sq_ref = 0.0;
  std::uint64_t nonfinite = 0;        // NaN or Inf in the checked output
  std::uint64_t checked = 0;          // elements compared
  std::uint64_t elem_violations = 0;  // elements outside the per-element bound
  double max_elem_ratio = 0.0;        // max |D - R| / (sum |A||B|), over finite elements

  // ||D - R|| / ||R||; +inf when anything was non-finite or nothing was checked.
  double rel_error() const;
  // Adds the elements `other` checked (another matrix of a batch): the sums and counts add, the
  // worst element ratio is the larger, so the result is what one check over both would give.
  VerifyStats& merge(const VerifyStats& other);
  bool passes(double tolerance) const;
  // "rel. error 1.2e-04 (tolerance 5.0e-03), 0 non-finite, 0 outside the element bound of
  // 65536 checked"
  std::string describe(double tolerance) const;
};

// How a GEMM of depth k in precision p rounds, in unit roundoffs: `roundings` roundings of an
// accumulator of unit roundoff u_acc (a random walk: sqrt(roundings) u_acc), one rounding of the
// output (u_out) and any re-rounding of inputs inside the tensor core (u_in: TF32's 10-bit
// mantissa). INT8 with int32 accumulation is exact. The derivation is in verify.cpp.
struct ErrorModel {
  double u_acc = 0.0, roundings = 0.0, u_out = 0.0, u_in = 0.0;
  bool exact = false;
  double expected_rel_error() const { return std::sqrt(roundings) * u_acc + u_out + u_in; }
  double frobenius_tolerance() const { return exact ? 0.0 : 3.0 * expected_rel_error(); }
  // Relative to sum_l |A_il B_lj|; a 4-sigma probabilistic bound.
  double element_tolerance() const { return exact ? 0.0 : 4.0 * expected_rel_error(); }
};
// The one tolerance lookup: precision p's row of the precision table, at depth k, written as
// `d_type` (default: the row's D type; e.g. an FP8 GEMM writing E4M3), with FP8 fast
// accumulation or not. Every unit roundoff follows from the row's types.
ErrorModel error_model(Precision p, std::int64_t k, std::optional<cudaDataType_t> d_type = {},
                       bool fast_accum = false);
// The unit roundoff of an output format, its element table row's (numerics/element.hpp; 0 for
// integers and for a type without a row): for outputs other than the precision's default (FP8
// GEMMs writing E4M3, INT8 GEMMs requantizing to INT8).
double unit_roundoff(cudaDataType_t t);

// The largest relative Frobenius error accepted for a GEMM of depth k in precision p:
// error_model(p, k).frobenius_tolerance(), the one table every benchmark and test uses.
double tolerance(Precision p, std::int64_t k);

// Host reference comparison (tests, small problems). With `abs_reference` (sum |A||B| per
// element) the per-element bound `element_tolerance` is checked too.
VerifyStats compare_host(std::span<const double> reference, std::span<const double> result,
                         std::span<const double> abs_reference = {},
                         double element_tolerance = 0.0);

template <typename T>
TCB_HD inline double to_double(T v) {
  if constexpr (std::is_same_v<T, __half>) {
    return static_cast<double>(__half2float(v));
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return static_cast<double>(__bfloat162float(v));
  } else if constexpr (std::is_same_v<T, __nv_fp8_e4m3> || std::is_same_v<T, __nv_fp8_e5m2>) {
    return static_cast<double>(static_cast<float>(v));
  } else {
    return static_cast<double>(v);
  }
}

// Writes the poison pattern over `bytes` bytes of device memory.
void poison(void* device_ptr, std::size_t bytes, cudaStream_t stream);

// Rows of an m-row output that verification checks: all of them up to `max_rows`, otherwise
// `max_rows` spread evenly from the first to the last (so edge tiles are always covered).
std::vector<std::int64_t> sample_rows(std::int64_t m, std::int64_t max_rows);

// Compares rows `rows` (device array of nrows indices) of the column-major m x n output D
// (leading dimension ldd, element type d_type) with scale * `reference` and the per-element
// bound element_tolerance * scale * `abs_reference` (both nrows x n, column-major, leading
// dimension nrows, as reference_gemm_rows writes them). Synchronizes `stream`.
VerifyStats compare_rows_device(cudaDataType_t d_type, const void* d, std::int64_t ldd,
                                const std::int64_t* rows, std::int64_t nrows, std::int64_t n,
                                const double* reference, const double* abs_reference, double scale,
                                double element_tolerance, cudaStream_t stream);

}  // namespace tcbench
