#include "tcbench/numerics/host_device.hpp"
#include "tcbench/error.hpp"
#include "tcbench/gemm_types.hpp"
#include "tcbench/reference_gemm.hpp"

#include <string>

namespace tcbench {
namespace {

// One block owns kCols output columns for ALL sampled rows: it streams B's kCols columns once
// (so B is read from DRAM exactly once over the grid) and the gathered A rows, which are small
// (nrows x k) and stay in L2 across blocks. Each thread accumulates one column for
// kRowsPerThread rows. Verifying a 16384^3 GEMM on 256 rows reads B (16384^2 elements) once and
// does 2 * 256 * 16384^2 FP64 FLOPs: milliseconds on a datacenter GPU, under a second on parts
// with 1/64-rate FP64.
constexpr int kCols = 32;
constexpr int kK = 16;
constexpr int kThreads = 256;
constexpr int kRowGroups = kThreads / kCols;                                      // 8
constexpr int kRowsPerThread = static_cast<int>(kMaxReferenceRows) / kRowGroups;  // 32

template <typename TA, typename TB>
__global__ void __launch_bounds__(kThreads)
    reference_rows_kernel(GemmProblem p, const TA* a, const TB* b, const std::int64_t* rows,
                          int nrows, double* out, double* abs_out) {
  __shared__ double sa[kMaxReferenceRows][kK + 1];       // gathered A rows, one K slice
  __shared__ double sb[kK][kCols + 1];                   // one K slice of B's columns
  const int tx = static_cast<int>(threadIdx.x) % kCols;  // column within the block
  const int ty = static_cast<int>(threadIdx.x) / kCols;  // row group
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * kCols + tx;
  double acc[kRowsPerThread] = {}, abs_acc[kRowsPerThread] = {};
  for (std::int64_t l0 = 0; l0 < p.k; l0 += kK) {
    for (int e = static_cast<int>(threadIdx.x); e < nrows * kK; e += kThreads) {
      const int r = e / kK, dl = e % kK;
      const std::int64_t l = l0 + dl;
      sa[r][dl] = l < p.k ? element_a(p, a, rows[r], l) : 0.0;
    }
    for (int e = static_cast<int>(threadIdx.x); e < kK * kCols; e += kThreads) {
      const int dl = e % kK, c = e / kK;  // consecutive threads walk down a column of B
      const std::int64_t l = l0 + dl, col = static_cast<std::int64_t>(blockIdx.x) * kCols + c;
      sb[dl][c] = (l < p.k && col < p.n) ? element_b(p, b, l, col) : 0.0;
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < kRowsPerThread; ++i) {
      const int r = ty + i * kRowGroups;
      if (r < nrows) {
#pragma unroll
        for (int dl = 0; dl < kK; ++dl) {
          const double prod = sa[r][dl] * sb[dl][tx];
          acc[i] += prod;
          abs_acc[i] += fabs(prod);
        }
      }
    }
    __syncthreads();
  }
  if (j >= p.n) return;
#pragma unroll
  for (int i = 0; i < kRowsPerThread; ++i) {
    const int r = ty + i * kRowGroups;
    if (r < nrows) {
      out[r + j * nrows] = acc[i];
      abs_out[r + j * nrows] = abs_acc[i];
    }
  }
}

template <typename TA, typename TB>
void launch(const GemmProblem& p, const void* a, const void* b, const std::int64_t* rows,
            std::int64_t nrows, double* out, double* abs_out, cudaStream_t stream) {
  const dim3 grid(static_cast<unsigned>(tcbench::numerics::ceil_div(p.n, kCols)));
  reference_rows_kernel<TA, TB>
      <<<grid, kThreads, 0, stream>>>(p, static_cast<const TA*>(a), static_cast<const TB*>(b), rows,
                                      static_cast<int>(nrows), out, abs_out);
}

}  // namespace

void reference_gemm_rows(const GemmProblem& p, cudaDataType_t a_type, const void* a,
                         cudaDataType_t b_type, const void* b, const std::int64_t* rows,
                         std::int64_t nrows, double* out, double* abs_out, cudaStream_t stream) {
  if (nrows <= 0 || nrows > kMaxReferenceRows)
    throw InvalidArgument("reference_gemm_rows: " + std::to_string(nrows) +
                          " rows requested; between 1 and " + std::to_string(kMaxReferenceRows) +
                          " are supported");
  const bool mixed_fp8 = (a_type == CUDA_R_8F_E4M3 && b_type == CUDA_R_8F_E5M2) ||
                         (a_type == CUDA_R_8F_E5M2 && b_type == CUDA_R_8F_E4M3);
  if (a_type != b_type && !mixed_fp8)
    throw InvalidArgument("reference_gemm_rows: A " + std::to_string(static_cast<int>(a_type)) +
                          " and B " + std::to_string(static_cast<int>(b_type)) +
                          " are not a type pair tcbench's GEMMs use");
  if (a_type == CUDA_R_8F_E4M3 && b_type == CUDA_R_8F_E5M2) {
    launch<__nv_fp8_e4m3, __nv_fp8_e5m2>(p, a, b, rows, nrows, out, abs_out, stream);
  } else if (a_type == CUDA_R_8F_E5M2 && b_type == CUDA_R_8F_E4M3) {
    launch<__nv_fp8_e5m2, __nv_fp8_e4m3>(p, a, b, rows, nrows, out, abs_out, stream);
  } else {
    visit_data_type(a_type, [&]<typename T>(TypeTag<T>) {
      launch<T, T>(p, a, b, rows, nrows, out, abs_out, stream);
    });
  }
  TCB_CUDA_LAUNCH("reference GEMM on " + std::to_string(nrows) + " rows of " + p.describe());
}

}  // namespace tcbench
