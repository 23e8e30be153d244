// FP32 SIMT GEMM (FFMA only): the CUDA-core baseline of every tensor-core speed-up in tcbench.
//
// Why this is a fair baseline. A speed-up "tensor cores vs CUDA cores" is only honest if the
// CUDA-core side is limited by its FFMA pipe, not by its own memory traffic. This kernel is the
// classic register-blocked SGEMM structure that the published analyses converge on:
//   - Volkov & Demmel, "Benchmarking GPUs to tune dense linear algebra", SC 2008: register
//     blocking, because an FFMA whose operand comes from shared memory is limited by the shared
//     memory bandwidth, not by the FFMA rate;
//   - Lai & Seznec, "Performance upper bound analysis and optimization of SGEMM on Fermi and
//     Kepler GPUs", CGO 2013: with an Rm x Rn register tile a thread issues Rm*Rn FFMA per
//     Rm/4 + Rn/4 LDS.128, and the FFMA share of the instruction mix bounds the attainable peak;
//     an 8x8 tile (64 FFMA per 4 LDS.128) leaves FFMA the bottleneck;
//   - Scott Gray, maxas SGEMM (github.com/NervanaSystems/maxas/wiki/SGEMM): 64x64 or 128x128 CTA
//     tiles of 8-deep k slices, 8x8 per thread split in 4x4 quadrants 64 apart so that LDS.128
//     reads are conflict-free, double-buffered shared memory and global loads prefetched into
//     registers one slice ahead;
//   - the CUTLASS SIMT SGEMM (NVIDIA blog "CUTLASS: Fast Linear Algebra in CUDA C++", 2017) and
//     S. Boehm, "How to Optimize a CUDA Matmul Kernel for cuBLAS-like Performance" (2022,
//     siboehm.com/articles/22/CUDA-MMM), which walk the same steps and measure each one.
//
// What the kernel does (geometry and its proofs: tcbench/kernels/gemm_simt.hpp, simt::, with host
// tests in tests/device/test_gemm_simt.cpp that run without a GPU):
//   - a 128x128 CTA tile, 256 threads, an 8x8 register micro-tile per thread: per k, 16 floats
//     of shared memory feed 64 FFMA;
//   - k-major shared tiles read with LDS.128 (four per thread per k), aligned to 16 bytes; the B
//     tile is padded by 4 words so its transposing store is conflict-free; the quadrant layout
//     makes every LDS.128 phase touch 32 distinct banks (A) or one address (B, broadcast);
//   - two shared buffers and one register stage: the next 8-deep slice is loaded from global
//     memory while the current one is multiplied, one barrier per slice;
//   - any m, n, k, lda, ldb, ldd: loads outside the matrix read 0, stores outside it are dropped.
//     Global loads are scalar (coalesced: 128 contiguous bytes of A, four full 32-byte sectors of
//     B per warp), so no alignment beyond float's is required; they are 8 per thread per 512 FFMA.
// Register budget: __launch_bounds__(256, 2) caps a thread at 128 registers so two CTAs share an
// SM. ptxas (CUDA 13.0) fits that with no spill on sm_75/80/86/89/120; on sm_90, sm_100 and sm_110
// it keeps 2-4 words on the stack and reloads about three per 8-deep slice (LDL, L1 hits), under
// 1% of the slice's ~630 instructions (512 of them FFMA), so the FFMA pipe stays the limit.
// The SASS rules (tests/sass/sass_rules.json) require FFMA and LDS.128 and forbid tensor-core
// instructions on every architecture, so a regression to scalar shared loads fails CI.
//
// What it is not: hand-scheduled SASS (maxas) or cuBLAS's SGEMM, which also use warp tiles,
// larger k slices and swizzled stores. cuBLASLt's PEDANTIC FP32 GEMM in the same topic is the
// ceiling beside it; the gap between the two is reported, not hidden. One tile shape also means
// small problems are not fair to it: with two 128x128 CTAs per SM, a GPU with S SMs needs about
// 2*S tiles per wave (H100 SXM, 132 SMs: 264 tiles, i.e. about 2080^2) before the FFMA pipes can
// be full, where cuBLAS switches to smaller tiles. Read its speed-ups at the large sizes.
#include "tcbench/numerics/host_device.hpp"
#include "tcbench/error.hpp"
#include "tcbench/kernels/gemm_simt.hpp"

#include <cstdint>

namespace tcbench::kernels {
namespace {

using namespace simt;

// One thread's share of the global -> shared copy of the k slices, in order. It holds one pointer
// per matrix (its pass-0 element of the next slice) and the values in flight in registers between
// the global load and the shared store; the other passes are constant steps from pass 0. Bounds
// in m and n are fixed per thread (a flag and a 4-bit mask); the caller says how many of the
// slice's 8 k rows are inside the matrix (8 except in the last slice).
class SliceLoader {
 public:
  __device__ SliceLoader(const GemmProblem& p, const float* a, const float* b, std::int64_t m0,
                         std::int64_t n0, int tid)
      : a_index_(a_load_index(tid, 0)), b_index_(b_load_index(tid, 0)) {
    a_ = a + (m0 + a_index_.mn) + a_index_.k * p.lda;
    b_ = b + b_index_.k + (n0 + b_index_.mn) * p.ldb;
    a_in_m_ = m0 + a_index_.mn < p.m;
    for (int pass = 0; pass < kLoadsPerThread; ++pass)
      if (n0 + b_index_.mn + pass * kBLoadStepN < p.n) b_in_n_ |= 1u << pass;
  }

  // Loads the next slice, whose first `rows` k rows are inside the matrix, into registers (0
  // outside it) and moves on by one slice.
  __device__ void load_next(const GemmProblem& p, int rows) {
#pragma unroll
    for (int pass = 0; pass < kLoadsPerThread; ++pass) {
      const bool a_ok = a_in_m_ && a_index_.k + pass * kALoadStepK < rows;
      a_staged_[pass] = a_ok ? a_[pass * kALoadStepK * p.lda] : 0.0f;
      const bool b_ok = ((b_in_n_ >> pass) & 1u) != 0 && b_index_.k < rows;
      b_staged_[pass] = b_ok ? b_[pass * kBLoadStepN * p.ldb] : 0.0f;
    }
    a_ += kBlockK * p.lda;
    b_ += kBlockK;
  }

  __device__ void store(float* as, float* bs) const {
#pragma unroll
    for (int pass = 0; pass < kLoadsPerThread; ++pass) {
      as[a_smem_offset(a_index_.k + pass * kALoadStepK, a_index_.mn)] = a_staged_[pass];
      bs[b_smem_offset(b_index_.k, b_index_.mn + pass * kBLoadStepN)] = b_staged_[pass];
    }
  }

 private:
  TileIndex a_index_, b_index_;
  const float* a_ = nullptr;
  const float* b_ = nullptr;
  bool a_in_m_ = false;
  unsigned b_in_n_ = 0;  // bit pass: that pass's column is inside the matrix
  float a_staged_[kLoadsPerThread] = {};
  float b_staged_[kLoadsPerThread] = {};
};

// k rows of the next slice that are inside the matrix, given the k not yet loaded (> 0).
__device__ __forceinline__ int slice_rows(std::int64_t k_left) {
  return k_left < kBlockK ? static_cast<int>(k_left) : kBlockK;
}

// Four consecutive floats from shared memory as one LDS.128 (offset is a multiple of 4).
__device__ __forceinline__ void load4(const float* smem, int offset, float* out) {
  const float4 v = *reinterpret_cast<const float4*>(smem + offset);
  out[0] = v.x;
  out[1] = v.y;
  out[2] = v.z;
  out[3] = v.w;
}

__global__ void __launch_bounds__(kThreads, 2)
    gemm_simt_fp32_kernel(GemmProblem p, const float* __restrict__ a, const float* __restrict__ b,
                          float* __restrict__ d) {
  __shared__ __align__(16) float as[2][kBlockK * kAStride];
  __shared__ __align__(16) float bs[2][kBlockK * kBStride];
  const int tid = static_cast<int>(threadIdx.x);
  const std::int64_t m0 = blockIdx.x * static_cast<std::int64_t>(kBlockM);
  const std::int64_t n0 = blockIdx.y * static_cast<std::int64_t>(kBlockN);
  SliceLoader loader(p, a, b, m0, n0, tid);
  loader.load_next(p, slice_rows(p.k));
  loader.store(as[0], bs[0]);
  __syncthreads();

  float acc[kThreadM][kThreadN] = {};
  int cur = 0;
  for (std::int64_t k_left = p.k; k_left > 0; k_left -= kBlockK, cur ^= 1) {
    const std::int64_t k_next = k_left - kBlockK;             // k left after this slice
    if (k_next > 0) loader.load_next(p, slice_rows(k_next));  // in flight during the FFMAs
#pragma unroll
    for (int k = 0; k < kBlockK; ++k) {
      float fa[kThreadM], fb[kThreadN];
#pragma unroll
      for (int q = 0; q < kThreadM; q += 4)
        load4(as[cur], a_smem_offset(k, fragment_row(tid, q)), fa + q);
#pragma unroll
      for (int q = 0; q < kThreadN; q += 4)
        load4(bs[cur], b_smem_offset(k, fragment_col(tid, q)), fb + q);
#pragma unroll
      for (int r = 0; r < kThreadM; ++r)
#pragma unroll
        for (int c = 0; c < kThreadN; ++c) acc[r][c] = fma_step(acc[r][c], fa[r], fb[c]);
    }
    // The other buffer was last read in the previous slice, before the barrier that ended it.
    if (k_next > 0) loader.store(as[cur ^ 1], bs[cur ^ 1]);
    __syncthreads();
  }

#pragma unroll
  for (int c = 0; c < kThreadN; ++c) {
    const std::int64_t gn = n0 + fragment_col(tid, c);
    if (gn >= p.n) continue;
#pragma unroll
    for (int r = 0; r < kThreadM; ++r) {
      const std::int64_t gm = m0 + fragment_row(tid, r);
      if (gm < p.m) d[gm + gn * p.ldd] = acc[r][c];
    }
  }
}

}  // namespace

void gemm_simt_fp32(const GemmProblem& p, const float* a, const float* b, float* d,
                    cudaStream_t stream) {
  if (p.trans_a || p.trans_b)
    throw InvalidArgument("gemm_simt_fp32 supports NN only, got " + p.describe());
  const std::int64_t tiles_m = numerics::ceil_div(p.m, kBlockM);
  const std::int64_t tiles_n = numerics::ceil_div(p.n, kBlockN);
  if (tiles_m > 0x7fffffff || tiles_n > 65535)
    throw InvalidArgument("gemm_simt_fp32: the shape needs more CTAs than a launch grid holds: " +
                          p.describe());
  const dim3 grid(static_cast<unsigned>(tiles_m), static_cast<unsigned>(tiles_n));
  gemm_simt_fp32_kernel<<<grid, kThreads, 0, stream>>>(p, a, b, d);
  TCB_CUDA_LAUNCH("gemm_simt_fp32 " + p.describe());
}

void gemm_simt_fp32_host(const GemmProblem& p, const float* a, const float* b, float* d) {
  if (p.trans_a || p.trans_b)
    throw InvalidArgument("gemm_simt_fp32_host supports NN only, got " + p.describe());
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = 0; i < p.m; ++i) {
      float acc = 0.0f;
      for (std::int64_t l = 0; l < p.k; ++l)
        acc = fma_step(acc, a[i + l * p.lda], b[l + j * p.ldb]);
      d[i + j * p.ldd] = acc;
    }
}

}  // namespace tcbench::kernels
