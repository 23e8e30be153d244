// Accumulator kernel, tcgen05 (datacenter Blackwell, compute capability 10.0 and 10.3): one CTA
// of 4 warps computes a 128 x 64 tile of D over all of K into a 128-lane x 64-column FP32
// accumulator in tensor memory. Each K slice of 32 e4m3 elements is staged from global memory
// into shared memory (K-major, no swizzle: numerics::kmajor_smem_offset), one thread issues one
// tcgen05.mma.cta_group::1.kind::f8f6f4 (M = 128, N = 64) and commits it to an mbarrier, and the
// CTA waits for it before the slice is overwritten. Every `promote` products the four warps read
// the accumulator (tcgen05.ld 32x32b: warp w holds TMEM lanes 32 w .. 32 w + 31, lane = row of
// D), add it to FP32 registers, and the next MMA overwrites it (enable-input-d false).
//
// Sources: PTX ISA, "TensorCore 5th Generation Family Instructions" (tcgen05.alloc, .mma,
// .commit, .ld, .wait, .fence; the shared-memory and instruction descriptors, which
// tcbench/numerics/mma_descriptors.hpp builds and tests/host checks); the same instruction forms
// as kernels/tensor_peak_tcgen05_sm100a.cu. Compiled for sm_100a and sm_103a only; the bodies
// are guarded by the arch feature macros, so any other target gets a trap.
#include "fp8_accumulator_detail.hpp"
#include "tcgen05_ops.cuh"
#include "tcbench/error.hpp"
#include "tcbench/numerics/mma_descriptors.hpp"

#include <cstdint>

namespace tcbench::kernels::detail {
namespace {

constexpr int kThreads = 128;
constexpr int kTileM = 128, kTileN = 64, kSliceBytes = 32;
constexpr std::uint32_t kColumns = 64;  // TMEM columns: one per column of the tile

// e4m3 x e4m3 -> f32, both operands K-major, M = 128, N = 64.
constexpr std::uint32_t kIdesc =
    numerics::umma_instr_descriptor({numerics::UmmaKind::f8f6f4, numerics::MmaInput::e4m3,
                                     numerics::MmaInput::e4m3, kTileM, kTileN});
static_assert(kIdesc != 0, "no instruction descriptor for the tile");

using namespace tcgen05;  // the instructions around the MMA (tcgen05_ops.cuh)

// D (+)= A B in TMEM; `accumulate` 0 overwrites D. Then the commit that arrives on `barrier`.
__device__ inline void mma_and_commit(std::uint32_t tmem, std::uint64_t da, std::uint64_t db,
                                      std::uint32_t accumulate, std::uint64_t* barrier) {
  TCB_TC(
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %4, 0;\n"
                   "tcgen05.mma.cta_group::1.kind::f8f6f4 [%0], %1, %2, %3, p;\n}\n" ::"r"(tmem),
                   "l"(da), "l"(db), "r"(kIdesc), "r"(accumulate)));
  commit<1>(barrier);
}

// This thread's row of the accumulator, added into `row` (or, with add false, copied).
__device__ inline void read_row(std::uint32_t taddr, float (&row)[kColumns], bool add) {
#pragma unroll
  for (std::uint32_t c = 0; c < kColumns; c += 8) {
    std::uint32_t r[8];
    tmem_load8(taddr + c, r);
#pragma unroll
    for (int j = 0; j < 8; ++j)
      row[c + j] = add ? row[c + j] + __uint_as_float(r[j]) : __uint_as_float(r[j]);
  }
}

__global__ void __launch_bounds__(kThreads, 1)
    fp8_accumulator_tcgen05_kernel(const std::uint8_t* __restrict__ a,
                                   const std::uint8_t* __restrict__ b, float* __restrict__ out,
                                   int n, int k, int promote) {
  __shared__ __align__(128) std::uint8_t a_slice[kTileM * kSliceBytes];
  __shared__ __align__(128) std::uint8_t b_slice[kTileN * kSliceBytes];
  __shared__ std::uint32_t tmem_slot;
  __shared__ __align__(8) std::uint64_t done;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = blockIdx.y * kTileM, col0 = blockIdx.x * kTileN;
  if (warp == 0) {
    tmem_alloc<1>(&tmem_slot, kColumns);
    tmem_relinquish<1>();
  }
  if (threadIdx.x == 0) {
    TCB_TC(asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(smem_address(&done))
                        : "memory"));
    TCB_TC(asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory"));
  }
  sync_all<1>();
  const std::uint32_t tmem = tmem_slot;
  const std::uint32_t my_lanes =
      tmem + numerics::tmem_address(0, 32u * static_cast<std::uint32_t>(warp), 0);
  const std::uint64_t da = numerics::umma_smem_descriptor(
      smem_address(a_slice), numerics::kKMajorLeadingBytes, numerics::kKMajorStrideBytes);
  const std::uint64_t db = numerics::umma_smem_descriptor(
      smem_address(b_slice), numerics::kKMajorLeadingBytes, numerics::kKMajorStrideBytes);

  float total[kColumns] = {};
  bool fresh = true;
  std::uint32_t parity = 0;
  for (int k0 = 0; k0 < k; k0 += kSliceBytes) {
    stage_kmajor_slice<kThreads>(a_slice, a, k, row0, kTileM, k0);
    stage_kmajor_slice<kThreads>(b_slice, b, k, col0, kTileN, k0);
    // Generic-proxy stores must be visible to the async proxy the tensor core reads through.
    TCB_TC(asm volatile("fence.proxy.async.shared::cta;" ::: "memory"));
    sync_all<1>();
    if (threadIdx.x == 0) mma_and_commit(tmem, da, db, fresh ? 0u : 1u, &done);
    wait_parity(&done, parity);  // the MMA has read the slices and written TMEM
    parity ^= 1;
    fence_after_sync();
    fresh = false;
    if (promote > 0 && (k0 + kSliceBytes) % promote == 0) {
      read_row(my_lanes, total, true);
      fresh = true;
    }
    sync_all<1>();  // every TMEM read and slice read done before the next slice and MMA
  }
  // Row 32 w + l of the tile. After a promotion at the last slice, total holds everything.
  float row[kColumns];
  if (fresh && promote > 0) {
#pragma unroll
    for (std::uint32_t c = 0; c < kColumns; ++c) row[c] = total[c] + 0.0f;  // as total + acc
  } else {
    read_row(my_lanes, row, false);
    if (promote > 0)
#pragma unroll
      for (std::uint32_t c = 0; c < kColumns; ++c) row[c] = total[c] + row[c];
  }
  float* row_out = out + static_cast<std::size_t>(row0 + 32 * warp + lane) * n + col0;
#pragma unroll
  for (std::uint32_t c = 0; c < kColumns; ++c) row_out[c] = row[c];
  sync_all<1>();  // every TMEM read before the deallocation
  if (warp == 0) tmem_dealloc<1>(tmem, kColumns);
}

}  // namespace

void launch_acc_tcgen05(const AccGemm& g, cudaStream_t s) {
  const dim3 grid(static_cast<unsigned>(g.n / kTileN), static_cast<unsigned>(g.m / kTileM));
  fp8_accumulator_tcgen05_kernel<<<grid, kThreads, 0, s>>>(static_cast<const std::uint8_t*>(g.a),
                                                           static_cast<const std::uint8_t*>(g.b),
                                                           g.d, g.n, g.k, g.promote);
  TCB_CUDA(cudaGetLastError());
}

}  // namespace tcbench::kernels::detail
