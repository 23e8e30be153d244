#include "tcbench/error.hpp"
#include "tcbench/reference_gemm.hpp"

namespace tcbench {
namespace {

constexpr int kTile = 16;

// A plain shared-memory tiled FP64 GEMM over gathered rows. Speed matters only enough that
// verifying a 16384^3 problem on 256 sampled rows takes well under a second.
template <typename TA, typename TB>
__global__ void reference_rows_kernel(GemmProblem p, const TA* a, const TB* b,
                                      const std::int64_t* rows, std::int64_t nrows, double* out) {
  __shared__ double sa[kTile][kTile + 1];
  __shared__ double sb[kTile][kTile + 1];
  const std::int64_t r = blockIdx.y * static_cast<std::int64_t>(kTile) + threadIdx.y;
  const std::int64_t j = blockIdx.x * static_cast<std::int64_t>(kTile) + threadIdx.x;
  const std::int64_t row_a = blockIdx.y * static_cast<std::int64_t>(kTile) + threadIdx.x;
  double acc = 0.0;
  for (std::int64_t l0 = 0; l0 < p.k; l0 += kTile) {
    // sa[y][x] = A(rows[tile row y], l0 + x); sb[y][x] = B(l0 + y, column x)
    const std::int64_t la = l0 + threadIdx.y;  // loaded transposed so reads stay coalesced-ish
    sa[threadIdx.x][threadIdx.y] =
        (row_a < nrows && la < p.k) ? element_a(p, a, rows[row_a], la) : 0.0;
    const std::int64_t lb = l0 + threadIdx.y;
    sb[threadIdx.y][threadIdx.x] = (lb < p.k && j < p.n) ? element_b(p, b, lb, j) : 0.0;
    __syncthreads();
    for (int t = 0; t < kTile; ++t) acc += sa[threadIdx.y][t] * sb[t][threadIdx.x];
    __syncthreads();
  }
  if (r < nrows && j < p.n) out[r + j * nrows] = acc;
}

}  // namespace

template <typename TA, typename TB>
void reference_gemm_rows(const GemmProblem& p, const TA* a, const TB* b, const std::int64_t* rows,
                         std::int64_t nrows, double* out, cudaStream_t stream) {
  const dim3 block(kTile, kTile);
  const dim3 grid(static_cast<unsigned>((p.n + kTile - 1) / kTile),
                  static_cast<unsigned>((nrows + kTile - 1) / kTile));
  reference_rows_kernel<<<grid, block, 0, stream>>>(p, a, b, rows, nrows, out);
  TCB_CUDA_LAUNCH("reference GEMM on " + std::to_string(nrows) + " rows of " + p.describe());
}

#define TCB_INSTANTIATE_REFERENCE(TA, TB)                                               \
  template void reference_gemm_rows<TA, TB>(const GemmProblem&, const TA*, const TB*,   \
                                            const std::int64_t*, std::int64_t, double*, \
                                            cudaStream_t);
TCB_INSTANTIATE_REFERENCE(float, float)
TCB_INSTANTIATE_REFERENCE(double, double)
TCB_INSTANTIATE_REFERENCE(__half, __half)
TCB_INSTANTIATE_REFERENCE(__nv_bfloat16, __nv_bfloat16)
TCB_INSTANTIATE_REFERENCE(std::int8_t, std::int8_t)
TCB_INSTANTIATE_REFERENCE(__nv_fp8_e4m3, __nv_fp8_e4m3)
TCB_INSTANTIATE_REFERENCE(__nv_fp8_e4m3, __nv_fp8_e5m2)
#undef TCB_INSTANTIATE_REFERENCE

}  // namespace tcbench
