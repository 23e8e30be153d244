// Verification: every result is compared with a higher-precision reference before it is timed.
//
// The measure is the relative Frobenius error ||D - R||_F / ||R||_F. Any NaN or Inf in D fails,
// whatever the norm says. Outputs are poisoned (all bytes 0xFF: NaN for every float format, -1
// for integers) before the run that is checked, so an output the kernel never wrote cannot pass.
#pragma once

#include "tcbench/precision.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_fp8.h>
#include <cuda_runtime_api.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <type_traits>
#include <vector>

namespace tcbench {

struct VerifyStats {
  double sum_sq_diff = 0.0;
  double sum_sq_ref = 0.0;
  std::uint64_t nonfinite = 0;  // NaN or Inf in the checked output
  std::uint64_t checked = 0;    // elements compared

  // ||D - R|| / ||R||; +inf when anything was non-finite or nothing was checked.
  double rel_error() const;
  bool passes(double tolerance) const;
  // "rel. error 1.2e-04 (tolerance 5.0e-03), 0 non-finite of 65536 checked"
  std::string describe(double tolerance) const;
};

// The largest relative Frobenius error accepted for a GEMM of depth k in precision p: the one
// tolerance table every benchmark and test uses. The derivation is in verify.cpp.
double tolerance(Precision p, std::int64_t k);

// Host reference comparison (tests, small problems).
VerifyStats compare_host(std::span<const double> reference, std::span<const double> result);

template <typename T>
__host__ __device__ inline double to_double(T v) {
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
// (leading dimension ldd) with `reference` (nrows x n, column-major, leading dimension nrows,
// as reference_gemm_rows writes it). Synchronizes `stream`.
template <typename TD>
VerifyStats compare_rows_device(const TD* d, std::int64_t ldd, const std::int64_t* rows,
                                std::int64_t nrows, std::int64_t n, const double* reference,
                                cudaStream_t stream);

}  // namespace tcbench
