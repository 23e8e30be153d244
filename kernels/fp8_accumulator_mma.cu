// Accumulator kernels, mma.sync family: every warp computes one 16 x 8 tile of D over all of K,
// loading its A and B fragments from global memory one instruction's k at a time (32-bit words:
// the elements of one register are contiguous in K), issuing one mma.sync into one accumulator,
// and every `promote` products adding the accumulator to FP32 registers and clearing it. A CTA
// of 4 warps covers 32 x 16.
//
// Fragment layouts: tcbench/numerics/mma_fragments.hpp (PTX ISA, "Matrix Fragments for
// mma.m16n8k16 / m16n8k32"). FP8 mma.sync is native (QMMA) on compute capability 8.9 and 12.x
// only; elsewhere ptxas emulates it through FP16 (tests/sass/sass_rules.json), so those targets
// get a trap, never the emulation, and acc_path_unsupported refuses them.
#include "fp8_accumulator_detail.hpp"
#include "tcbench/error.hpp"
#include "tcbench/numerics/mma_fragments.hpp"

#include <cstdint>

namespace tcbench::kernels::detail {
namespace {

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define TCB_ACC_FROM_SM80(body) body
#else
#define TCB_ACC_FROM_SM80(body) __trap()
#endif
#if defined(__CUDA_ARCH__) && \
    ((__CUDA_ARCH__ >= 890 && __CUDA_ARCH__ < 900) || __CUDA_ARCH__ >= 1200)
#define TCB_ACC_NATIVE_QMMA(body) body
#else
#define TCB_ACC_NATIVE_QMMA(body) __trap()
#endif

constexpr int kThreads = 128;
constexpr int kTileM = 32, kTileN = 16;

// One Op per instruction: elements per 32-bit register (k = 8 x that), bytes per element.
#define TCB_ACC_MMA_OP(Name, GUARD, shape_types, per_reg, bytes)                               \
  struct Name {                                                                                \
    static constexpr int kPerReg = per_reg, kBytes = bytes, kK = 8 * per_reg;                  \
    __device__ static void mma(float (&d)[4], const std::uint32_t (&a)[4],                     \
                               const std::uint32_t (&b)[2]) {                                  \
      GUARD(asm volatile("mma.sync.aligned." shape_types                                       \
                         " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"              \
                         : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                      \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))); \
    }                                                                                          \
  }
TCB_ACC_MMA_OP(AccMmaE4m3, TCB_ACC_NATIVE_QMMA, "m16n8k32.row.col.f32.e4m3.e4m3.f32", 4, 1);
TCB_ACC_MMA_OP(AccMmaF16, TCB_ACC_FROM_SM80, "m16n8k16.row.col.f32.f16.f16.f32", 2, 2);
TCB_ACC_MMA_OP(AccMmaBf16, TCB_ACC_FROM_SM80, "m16n8k16.row.col.f32.bf16.bf16.f32", 2, 2);

// The 32-bit word of a row-major (K-contiguous) matrix holding elements (row, col .. col + v - 1).
template <class Op>
__device__ inline std::uint32_t word(const std::uint8_t* m, int k, int row, int col) {
  return *reinterpret_cast<const std::uint32_t*>(m + (static_cast<std::size_t>(row) * k + col) *
                                                         Op::kBytes);
}

template <class Op>
__global__ void __launch_bounds__(kThreads)
    fp8_accumulator_mma_kernel(const std::uint8_t* __restrict__ a,
                               const std::uint8_t* __restrict__ b, float* __restrict__ d, int n,
                               int k, int promote) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int row0 = blockIdx.y * kTileM + (warp / 2) * 16;
  const int col0 = blockIdx.x * kTileN + (warp % 2) * 8;
  float acc[4] = {}, total[4] = {};
  for (int k0 = 0; k0 < k; k0 += Op::kK) {
    std::uint32_t ra[4], rb[2];
#pragma unroll
    for (int r = 0; r < 4; ++r) {
      const numerics::RowCol rc = numerics::mma_a_element(lane, r * Op::kPerReg, Op::kPerReg);
      ra[r] = word<Op>(a, k, row0 + rc.row, k0 + rc.col);
    }
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const numerics::RowCol rc = numerics::mma_b_element(lane, r * Op::kPerReg, Op::kPerReg);
      rb[r] = word<Op>(b, k, col0 + rc.col, k0 + rc.row);
    }
    Op::mma(acc, ra, rb);
    if (promote > 0 && (k0 + Op::kK) % promote == 0) {
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        total[e] += acc[e];
        acc[e] = 0.0f;
      }
    }
  }
#pragma unroll
  for (int e = 0; e < 4; ++e) {
    const numerics::RowCol rc = numerics::mma_c_element(lane, e);
    d[static_cast<std::size_t>(row0 + rc.row) * n + col0 + rc.col] =
        promote > 0 ? total[e] + acc[e] : acc[e];
  }
}

template <class Op>
void launch(const AccGemm& g, cudaStream_t s) {
  const dim3 grid(static_cast<unsigned>(g.n / kTileN), static_cast<unsigned>(g.m / kTileM));
  fp8_accumulator_mma_kernel<Op><<<grid, kThreads, 0, s>>>(static_cast<const std::uint8_t*>(g.a),
                                                           static_cast<const std::uint8_t*>(g.b),
                                                           g.d, g.n, g.k, g.promote);
  TCB_CUDA(cudaGetLastError());
}

}  // namespace

void launch_acc_mma(AccPath p, const AccGemm& g, cudaStream_t s) {
  switch (p) {
    case AccPath::mma_e4m3:
      return launch<AccMmaE4m3>(g, s);
    case AccPath::mma_f16:
      return launch<AccMmaF16>(g, s);
    case AccPath::mma_bf16:
      return launch<AccMmaBf16>(g, s);
    default:
      throw InvalidArgument("launch_acc_mma: not an mma.sync path");
  }
}

}  // namespace tcbench::kernels::detail
