// FP32 GEMM on CUDA cores (FFMA only): the baseline that tensor-core speed-ups are measured from.
// The design (why it is a fair baseline) is explained at the top of kernels/gemm_simt.cu.
#pragma once

#include "tcbench/gemm_problem.hpp"
#include "tcbench/numerics/host_device.hpp"

#include <cuda_runtime_api.h>

namespace tcbench::kernels {

// D = A * B, column-major, NN only (p.trans_a = p.trans_b = false), p resolved. Any m, n, k and
// any leading dimensions (edge tiles are guarded; no alignment of the pointers or of lda/ldb/ldd
// beyond that of float is needed). Enqueues on `stream` and makes no other runtime call, so event
// timing sees only the kernel.
void gemm_simt_fp32(const GemmProblem& p, const float* a, const float* b, float* d,
                    cudaStream_t stream);

// The same product on the host, in exactly the kernel's order (simt::fma_step over k = 0..k-1,
// from +0), so a device test can compare the kernel with it bit for bit. O(m*n*k): small shapes.
void gemm_simt_fp32_host(const GemmProblem& p, const float* a, const float* b, float* d);

// The tile geometry of gemm_simt_fp32, shared by the kernel and the host tests that prove its
// shared-memory accesses are free of bank conflicts and that every output is computed once.
namespace simt {

inline constexpr int kBlockM = 128, kBlockN = 128, kBlockK = 8;               // CTA tile
inline constexpr int kThreadM = 8, kThreadN = 8;                              // register micro-tile
inline constexpr int kThreads = (kBlockM / kThreadM) * (kBlockN / kThreadN);  // 256
inline constexpr int kLoadsPerThread = kBlockM * kBlockK / kThreads;          // 4 (A and B each)
static_assert(kBlockM * kBlockK == kBlockN * kBlockK, "A and B tiles are loaded alike");

// Shared tiles are k-major: row l of a tile holds the 128 m (or n) values of that k, so a
// thread's 4 consecutive rows or columns are one 16-byte LDS.128.
//   A: stored as loaded (column-major A is m-contiguous already): a warp writes 32 consecutive
//      words, conflict-free without padding.
//   B: column-major B is k-contiguous, so the store transposes; with a row stride of 128 words
//      the 8 k values a warp writes per column all land in one bank (8-way conflict). Four words
//      of padding shift each row by 4 banks: conflict-free, and rows stay 16-byte aligned.
inline constexpr int kAStride = kBlockM;
inline constexpr int kBStride = kBlockN + 4;
static_assert(kAStride % 4 == 0 && kBStride % 4 == 0, "LDS.128 needs 16-byte aligned rows");

// The 256 threads form a 16 (m) x 16 (n) grid; thread (tm, tn) owns rows {tm*4 .. tm*4+3} and
// {64 + tm*4 ..} and columns {tn*4 ..} and {64 + tn*4 ..}: 2x2 blocks of 4x4, 64 apart. In each
// quarter warp (the 8 threads one LDS.128 phase serves) tm takes 8 values -> 8 distinct 16-byte
// chunks of one A row, i.e. 32 distinct banks; tn is one value -> a broadcast from B.
TCB_HD constexpr int thread_m(int tid) {
  return tid % (kBlockM / kThreadM);
}
TCB_HD constexpr int thread_n(int tid) {
  return tid / (kBlockM / kThreadM);
}
TCB_HD constexpr int fragment_row(int tid, int r) {  // r in [0, kThreadM)
  return (r / 4) * (kBlockM / 2) + thread_m(tid) * 4 + r % 4;
}
TCB_HD constexpr int fragment_col(int tid, int c) {  // c in [0, kThreadN)
  return (c / 4) * (kBlockN / 2) + thread_n(tid) * 4 + c % 4;
}

// Global -> shared loaders, 4 passes of 256 threads over each 8 x 128 tile. Pass `pass` of a
// thread reads its pass-0 element moved by a fixed step, so the kernel keeps one pointer per
// matrix and adds constants.
// A: consecutive threads take consecutive m of one k (128 contiguous bytes per warp).
// B: consecutive threads take consecutive k of one column (4 full 32-byte sectors per warp).
struct TileIndex {
  int k, mn;  // k within the tile, m (for A) or n (for B) within the tile
};
inline constexpr int kALoadStepK = kThreads / kBlockM;  // 2: k rows between A passes
inline constexpr int kBLoadStepN = kThreads / kBlockK;  // 32: columns between B passes
TCB_HD constexpr TileIndex a_load_index(int tid, int pass) {
  return {tid / kBlockM + pass * kALoadStepK, tid % kBlockM};
}
TCB_HD constexpr TileIndex b_load_index(int tid, int pass) {
  return {tid % kBlockK, tid / kBlockK + pass * kBLoadStepN};
}
TCB_HD constexpr int a_smem_offset(int k, int m) {
  return k * kAStride + m;
}
TCB_HD constexpr int b_smem_offset(int k, int n) {
  return k * kBStride + n;
}

// The per-element math: one fused multiply-add per k, in ascending k, starting from +0. Out-of-
// range k (the last tile's padding) adds fma(0, 0, acc) == acc, so the kernel's result equals the
// host's sequence exactly.
TCB_HD inline float fma_step(float acc, float a, float b) {
  return fmaf(a, b, acc);
}

}  // namespace simt
}  // namespace tcbench::kernels
