// FP16/BF16 tensor-core GEMM through WMMA: 64x64 block tile, four warps of 32x32, FP32 accumulate.
//
// Plain on purpose (single-buffered shared memory, scalar global loads): it shows what a
// straightforward tensor-core kernel reaches next to cuBLASLt, and the SASS test asserts it
// compiles to HMMA. Edge tiles are zero-padded in shared memory, so any m, n, k works.
#include "tcbench/error.hpp"
#include "tcbench/kernels/gemm_wmma.hpp"

#include <mma.h>

#include <type_traits>

namespace tcbench::kernels {
namespace {

namespace wmma = nvcuda::wmma;

constexpr int kBM = 64, kBN = 64, kBK = 32;
constexpr int kWarpTile = 32;  // each warp owns a 32x32 output tile
constexpr int kFrag = 16;      // WMMA m16n16k16
constexpr int kThreads = 128;  // 2x2 warps
// Row padding keeps leading dimensions multiples of 8 elements (16 bytes, WMMA's requirement)
// while breaking shared-memory bank conflicts between columns.
constexpr int kPadA = kBM + 8;  // A tile stored (BK, BM): element (i, l) at [l][i]
constexpr int kPadB = kBK + 8;  // B tile stored (BN, BK): element (l, j) at [j][l]
constexpr int kPadC = kBN + 4;

template <typename T>
__device__ inline T from_float(float v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else {
    return __float2bfloat16_rn(v);
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    gemm_wmma_kernel(GemmProblem p, const T* __restrict__ a, const T* __restrict__ b,
                     T* __restrict__ d) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    __trap();  // unreachable: the host refuses BF16 before sm_80 (wmma_unsupported_reason)
    return;
  } else
#endif
  {
    __shared__ __align__(32) T as[kBK][kPadA];
    __shared__ __align__(32) T bs[kBN][kPadB];
    __shared__ __align__(
        32) float cs[kBM][kPadC];  // cs[i][j]: staging for the converted, bounds-checked store
    const int tid = threadIdx.x, warp = tid / 32;
    const int wm = (warp % 2) * kWarpTile, wn = (warp / 2) * kWarpTile;
    const std::int64_t m0 = blockIdx.x * static_cast<std::int64_t>(kBM);
    const std::int64_t n0 = blockIdx.y * static_cast<std::int64_t>(kBN);
    const T zero = from_float<T>(0.0f);

    wmma::fragment<wmma::accumulator, kFrag, kFrag, kFrag, float> acc[2][2];
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < 2; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

    for (std::int64_t k0 = 0; k0 < p.k; k0 += kBK) {
      for (int e = tid; e < kBM * kBK; e += kThreads) {
        const int i = e % kBM, l = e / kBM;
        const std::int64_t gi = m0 + i, gl = k0 + l;
        as[l][i] = (gi < p.m && gl < p.k) ? a[gi + gl * p.lda] : zero;
      }
      for (int e = tid; e < kBN * kBK; e += kThreads) {
        const int l = e % kBK, j = e / kBK;
        const std::int64_t gl = k0 + l, gj = n0 + j;
        bs[j][l] = (gl < p.k && gj < p.n) ? b[gl + gj * p.ldb] : zero;
      }
      __syncthreads();
#pragma unroll
      for (int kk = 0; kk < kBK; kk += kFrag) {
        wmma::fragment<wmma::matrix_a, kFrag, kFrag, kFrag, T, wmma::col_major> fa[2];
        wmma::fragment<wmma::matrix_b, kFrag, kFrag, kFrag, T, wmma::col_major> fb[2];
#pragma unroll
        for (int i = 0; i < 2; ++i) wmma::load_matrix_sync(fa[i], &as[kk][wm + i * kFrag], kPadA);
#pragma unroll
        for (int j = 0; j < 2; ++j) wmma::load_matrix_sync(fb[j], &bs[wn + j * kFrag][kk], kPadB);
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
      if (gi < p.m && gj < p.n) d[gi + gj * p.ldd] = from_float<T>(cs[i][j]);
    }
  }
}

}  // namespace

std::optional<std::string> wmma_unsupported_reason(int cc_major, int cc_minor, Precision p) {
  const int cc = cc_major * 10 + cc_minor;
  if (p != Precision::fp16 && p != Precision::bf16)
    return "the WMMA kernel implements fp16 and bf16 only, not " + std::string(name(p));
  if (p == Precision::bf16 && cc < 80)
    return "BF16 tensor cores need compute capability 8.0 or newer; this GPU is " +
           std::to_string(cc_major) + "." + std::to_string(cc_minor);
  return std::nullopt;
}

template <typename T>
void gemm_wmma(const GemmProblem& p, const T* a, const T* b, T* d, cudaStream_t stream) {
  if (p.trans_a || p.trans_b)
    throw InvalidArgument("gemm_wmma supports NN only, got " + p.describe());
  const dim3 grid(static_cast<unsigned>((p.m + kBM - 1) / kBM),
                  static_cast<unsigned>((p.n + kBN - 1) / kBN));
  if (grid.y > 65535)
    throw InvalidArgument("gemm_wmma: n too large for the launch grid: " + p.describe());
  gemm_wmma_kernel<T><<<grid, kThreads, 0, stream>>>(p, a, b, d);
  TCB_CUDA_LAUNCH("gemm_wmma " + p.describe());
}

template void gemm_wmma<__half>(const GemmProblem&, const __half*, const __half*, __half*,
                                cudaStream_t);
template void gemm_wmma<__nv_bfloat16>(const GemmProblem&, const __nv_bfloat16*,
                                       const __nv_bfloat16*, __nv_bfloat16*, cudaStream_t);

}  // namespace tcbench::kernels
