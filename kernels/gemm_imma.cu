// INT8 tensor-core GEMM through WMMA (signed char, m16n16k16): 64x64 block tile, four warps of
// 32x32, int32 accumulate, TN layout (A and B both K-contiguous, as cuBLASLt's IMMA path wants).
//
// Plain on purpose, like gemm_wmma.cu: single-buffered shared memory and byte loads, so it shows
// what a straightforward INT8 kernel reaches next to cuBLASLt; the SASS test asserts it compiles
// to IMMA on every architecture from sm_75. Edge tiles are zero-padded, so any m, n, k works,
// and the result is exact: the device test compares it with a CPU int32 GEMM for equality.
#include "tcbench/error.hpp"
#include "tcbench/kernels/gemm_imma.hpp"

#include <mma.h>

namespace tcbench::kernels {
namespace {

namespace wmma = nvcuda::wmma;

constexpr int kBM = 64, kBN = 64, kBK = 32;
constexpr int kWarpTile = 32;  // each warp owns a 32x32 output tile
constexpr int kFrag = 16;      // WMMA m16n16k16 for 8-bit integers
constexpr int kThreads = 128;  // 2x2 warps
// WMMA wants 8-bit leading dimensions that are multiples of 16 bytes; the extra 16 bytes per row
// also spread rows over shared-memory banks.
constexpr int kPadK = kBK + 16;  // as[i][l] = A(i, l), bs[j][l] = B(l, j): both K-contiguous
constexpr int kPadC = kBN + 4;

__global__ void __launch_bounds__(kThreads)
    gemm_imma_kernel(GemmProblem p, const signed char* __restrict__ a,
                     const signed char* __restrict__ b, int* __restrict__ d) {
  __shared__ __align__(32) signed char as[kBM][kPadK];
  __shared__ __align__(32) signed char bs[kBN][kPadK];
  __shared__ __align__(32) int cs[kBM][kPadC];  // staging for the bounds-checked store
  const int tid = threadIdx.x, warp = tid / 32;
  const int wm = (warp % 2) * kWarpTile, wn = (warp / 2) * kWarpTile;
  const std::int64_t m0 = blockIdx.x * static_cast<std::int64_t>(kBM);
  const std::int64_t n0 = blockIdx.y * static_cast<std::int64_t>(kBN);

  wmma::fragment<wmma::accumulator, kFrag, kFrag, kFrag, int> acc[2][2];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0);

  for (std::int64_t k0 = 0; k0 < p.k; k0 += kBK) {
    // Consecutive threads read consecutive K: coalesced, since both operands are K-contiguous.
    for (int e = tid; e < kBM * kBK; e += kThreads) {
      const int l = e % kBK, i = e / kBK;
      const std::int64_t gi = m0 + i, gl = k0 + l;
      as[i][l] = (gi < p.m && gl < p.k) ? a[gl + gi * p.lda] : static_cast<signed char>(0);
    }
    for (int e = tid; e < kBN * kBK; e += kThreads) {
      const int l = e % kBK, j = e / kBK;
      const std::int64_t gl = k0 + l, gj = n0 + j;
      bs[j][l] = (gl < p.k && gj < p.n) ? b[gl + gj * p.ldb] : static_cast<signed char>(0);
    }
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; kk += kFrag) {
      wmma::fragment<wmma::matrix_a, kFrag, kFrag, kFrag, signed char, wmma::row_major> fa[2];
      wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, signed char, wmma::col_major> fb[2];
#pragma unroll
      for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], &as[wm + i * kFrag][kk], kPadK);
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], &bs[wn + j * kFrag][kk], kPadK);
#pragma unroll
      for (int i = 0; i < 2; ++i)
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::mma_sync(acc[i][j], fa[i], fb[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < 2; ++j)
      wmma::store_matrix_sync(&cs[wm + i * kFrag][wn + j * kFrag], acc[i][j], kPadC,
                              wmma::mem_row_major);
  __syncthreads();
  for (int e = tid; e < kBM * kBN; e += kThreads) {
    const int i = e % kBM, j = e / kBM;
    const std::int64_t gi = m0 + i, gj = n0 + j;
    if (gi < p.m && gj < p.n) d[gi + gj * p.ldd] = cs[i][j];
  }
}

}  // namespace

std::optional<std::string> imma_unsupported_reason(int cc_major, int cc_minor,
                                                   const GemmProblem& p) {
  if (cc_major * 10 + cc_minor < 75)
    return "INT8 tensor cores (IMMA) need compute capability 7.5 or newer; this GPU is " +
           std::to_string(cc_major) + "." + std::to_string(cc_minor);
  if (!p.trans_a || p.trans_b)
    return "the INT8 GEMM takes the TN layout only (A transposed, B not, both K-contiguous), got " +
           p.describe();
  return std::nullopt;
}

void gemm_imma(const GemmProblem& p, const std::int8_t* a, const std::int8_t* b, std::int32_t* d,
               cudaStream_t stream) {
  if (!p.trans_a || p.trans_b)
    throw InvalidArgument("gemm_imma supports TN only, got " + p.describe());
  const dim3 grid(static_cast<unsigned>((p.m + kBM - 1) / kBM),
                  static_cast<unsigned>((p.n + kBN - 1) / kBN));
  if (grid.y > 65535)
    throw InvalidArgument("gemm_imma: n too large for the launch grid: " + p.describe());
  gemm_imma_kernel<<<grid, kThreads, 0, stream>>>(p, reinterpret_cast<const signed char*>(a),
                                                  reinterpret_cast<const signed char*>(b), d);
  TCB_CUDA_LAUNCH("gemm_imma " + p.describe());
}

}  // namespace tcbench::kernels
