// FP32 SIMT GEMM: shared-memory tiles, a 4x4 register micro-tile per thread.
//
// Deliberately plain (no vector loads, no double buffering): its job is to be obviously correct
// and to use FFMA only, so the fp16_vs_fp32 topic can show what tensor cores add over CUDA cores.
// The SASS test asserts it contains FFMA and no HMMA.
#include "tcbench/error.hpp"
#include "tcbench/kernels/gemm_simt.hpp"

namespace tcbench::kernels {
namespace {

constexpr int kBM = 64, kBN = 64, kBK = 16;
constexpr int kTM = 4, kTN = 4;                      // per-thread micro-tile
constexpr int kThreads = (kBM / kTM) * (kBN / kTN);  // 256

__global__ void __launch_bounds__(kThreads)
    gemm_simt_fp32_kernel(GemmProblem p, const float* __restrict__ a, const float* __restrict__ b,
                          float* __restrict__ d) {
  __shared__ float as[kBK][kBM];  // (BK, BM): A tile, k-major so a thread's 4 rows are adjacent
  __shared__ float bs[kBK][kBN];  // (BK, BN)
  const int tid = threadIdx.x;
  const int tx = tid % (kBM / kTM), ty = tid / (kBM / kTM);
  const std::int64_t m0 = blockIdx.x * static_cast<std::int64_t>(kBM);
  const std::int64_t n0 = blockIdx.y * static_cast<std::int64_t>(kBN);

  float acc[kTM][kTN] = {};
  for (std::int64_t k0 = 0; k0 < p.k; k0 += kBK) {
    // 1024 elements per tile, 4 per thread; consecutive threads read consecutive rows of A
    // (column-major) and consecutive k of B, so global loads coalesce.
    for (int e = tid; e < kBM * kBK; e += kThreads) {
      const int i = e % kBM, l = e / kBM;
      const std::int64_t gi = m0 + i, gl = k0 + l;
      as[l][i] = (gi < p.m && gl < p.k) ? a[gi + gl * p.lda] : 0.0f;
    }
    for (int e = tid; e < kBN * kBK; e += kThreads) {
      const int l = e % kBK, j = e / kBK;
      const std::int64_t gl = k0 + l, gj = n0 + j;
      bs[l][j] = (gl < p.k && gj < p.n) ? b[gl + gj * p.ldb] : 0.0f;
    }
    __syncthreads();
#pragma unroll
    for (int l = 0; l < kBK; ++l) {
      float ra[kTM], rb[kTN];
#pragma unroll
      for (int i = 0; i < kTM; ++i) ra[i] = as[l][tx * kTM + i];
#pragma unroll
      for (int j = 0; j < kTN; ++j) rb[j] = bs[l][ty * kTN + j];
#pragma unroll
      for (int i = 0; i < kTM; ++i)
#pragma unroll
        for (int j = 0; j < kTN; ++j) acc[i][j] = fmaf(ra[i], rb[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int j = 0; j < kTN; ++j)
#pragma unroll
    for (int i = 0; i < kTM; ++i) {
      const std::int64_t gi = m0 + tx * kTM + i, gj = n0 + ty * kTN + j;
      if (gi < p.m && gj < p.n) d[gi + gj * p.ldd] = acc[i][j];
    }
}

}  // namespace

void gemm_simt_fp32(const GemmProblem& p, const float* a, const float* b, float* d,
                    cudaStream_t stream) {
  if (p.trans_a || p.trans_b)
    throw InvalidArgument("gemm_simt_fp32 supports NN only, got " + p.describe());
  const dim3 grid(static_cast<unsigned>((p.m + kBM - 1) / kBM),
                  static_cast<unsigned>((p.n + kBN - 1) / kBN));
  if (grid.y > 65535)
    throw InvalidArgument("gemm_simt_fp32: n too large for the launch grid: " + p.describe());
  gemm_simt_fp32_kernel<<<grid, kThreads, 0, stream>>>(p, a, b, d);
  TCB_CUDA_LAUNCH("gemm_simt_fp32 " + p.describe());
}

}  // namespace tcbench::kernels
