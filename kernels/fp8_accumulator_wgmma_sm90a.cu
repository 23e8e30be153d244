// Accumulator kernel, wgmma (Hopper, sm_90a only): one warpgroup per CTA computes a 64 x 64 tile
// of D over all of K. Each K slice of 32 e4m3 elements is staged from global memory into shared
// memory (K-major, no swizzle: numerics::kmajor_smem_offset, the layout the descriptors of
// tensor_peak_wgmma_sm90a.cu address) and multiplied by one wgmma.m64n64k32 into 32 FP32
// registers per thread, waited for before the slice is overwritten. Every `promote` products
// the accumulator is added to FP32 registers and the next wgmma overwrites it (scale-d = 0).
//
// Sources: PTX ISA, "Asynchronous Warpgroup Level Matrix Multiply-Accumulate Instructions"
// (wgmma.mma_async, its matrix descriptor and the register fragment of D for m64nNk32).
// Compiled for sm_90a only (kernels/*_sm90a.cu); off it the body is a trap.
#include "fp8_accumulator_detail.hpp"
#include "tcbench/error.hpp"
#include "tcbench/numerics/mma_descriptors.hpp"

#include <cstdint>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define TCB_ACC_HAS_WGMMA 1
#else
#define TCB_ACC_HAS_WGMMA 0
#endif

namespace tcbench::kernels::detail {
namespace {

constexpr int kThreads = 128;  // one warpgroup
constexpr int kTileM = 64, kTileN = 64, kSliceBytes = 32;

__device__ inline std::uint64_t descriptor(const void* smem) {
  return numerics::wgmma_smem_descriptor(static_cast<std::uint32_t>(__cvta_generic_to_shared(smem)),
                                         numerics::kKMajorLeadingBytes,
                                         numerics::kKMajorStrideBytes);
}

// D (+)= A B for one K slice: `accumulate` 0 overwrites D (scale-d).
__device__ inline void wgmma_e4m3(float (&d)[32], std::uint64_t da, std::uint64_t db,
                                  int accumulate) {
#if TCB_ACC_HAS_WGMMA
  asm volatile(
      "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n64k32.f32.e4m3.e4m3 "
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, "
      "%19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]),
        "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]),
        "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),
        "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]),
        "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
      : "l"(da), "l"(db), "r"(accumulate));
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#else
  (void)d, (void)da, (void)db, (void)accumulate;
  __trap();
#endif
}

__device__ inline void wgmma_fence() {
#if TCB_ACC_HAS_WGMMA
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#endif
}

__global__ void __launch_bounds__(kThreads)
    fp8_accumulator_wgmma_kernel(const std::uint8_t* __restrict__ a,
                                 const std::uint8_t* __restrict__ b, float* __restrict__ out, int n,
                                 int k, int promote) {
  __shared__ __align__(128) std::uint8_t a_slice[kTileM * kSliceBytes];
  __shared__ __align__(128) std::uint8_t b_slice[kTileN * kSliceBytes];
  const int row0 = blockIdx.y * kTileM, col0 = blockIdx.x * kTileN;
  const std::uint64_t da = descriptor(a_slice), db = descriptor(b_slice);
  float d[32] = {}, total[32] = {};
  bool fresh = true;  // the next wgmma starts the accumulator over
  for (int k0 = 0; k0 < k; k0 += kSliceBytes) {
    stage_kmajor_slice<kThreads>(a_slice, a, k, row0, kTileM, k0);
    stage_kmajor_slice<kThreads>(b_slice, b, k, col0, kTileN, k0);
    // Generic-proxy stores must be visible to the async proxy wgmma reads through.
#if TCB_ACC_HAS_WGMMA
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
#endif
    __syncthreads();
    wgmma_fence();
    wgmma_e4m3(d, da, db, fresh ? 0 : 1);
    fresh = false;
    if (promote > 0 && (k0 + kSliceBytes) % promote == 0) {
#pragma unroll
      for (int i = 0; i < 32; ++i) {
        total[i] += d[i];
        d[i] = 0.0f;
      }
      fresh = true;
    }
    __syncthreads();  // every thread's wgmma has read the slices before they are overwritten
  }
  // Accumulator fragment (PTX ISA, wgmma D for m64nNk*): warp w, lane l, register i:
  // row = 16 w + l / 4 + 8 ((i / 2) % 2), col = 8 (i / 4) + 2 (l % 4) + i % 2.
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    const int row = 16 * warp + lane / 4 + 8 * ((i / 2) % 2);
    const int col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    out[static_cast<std::size_t>(row0 + row) * n + col0 + col] =
        promote > 0 ? total[i] + d[i] : d[i];
  }
}

}  // namespace

void launch_acc_wgmma(const AccGemm& g, cudaStream_t s) {
  const dim3 grid(static_cast<unsigned>(g.n / kTileN), static_cast<unsigned>(g.m / kTileM));
  fp8_accumulator_wgmma_kernel<<<grid, kThreads, 0, s>>>(static_cast<const std::uint8_t*>(g.a),
                                                         static_cast<const std::uint8_t*>(g.b), g.d,
                                                         g.n, g.k, g.promote);
  TCB_CUDA(cudaGetLastError());
}

}  // namespace tcbench::kernels::detail
