// Tensor-peak kernels, mma.sync family: every warp holds one A and one B fragment in registers
// and issues mma.sync into kChains independent accumulators in a loop, nothing else.
//
// Instruction shapes and fragment layouts: PTX ISA, "Warp-level matrix multiply-accumulate
// instructions" (mma.m16n8k8 tf32, m16n8k16 f16/bf16, m16n8k32 s8/e4m3). Published context:
// on Hopper mma.sync reaches only about 62.9-65% of the dense FP16 peak, which wgmma is needed to
// approach (Luo et al., "Dissecting the NVIDIA Hopper Architecture through Microbenchmarking and
// Multiple Level Analysis", arXiv 2501.12084).
#include "tcbench/error.hpp"
#include "tcbench/kernels/tensor_peak.hpp"
#include "tcbench/numerics/mma_fragments.hpp"
#include "tensor_peak_detail.hpp"

#include <cuda_fp16.h>

#include <cstdint>

namespace tcbench::kernels::detail {
namespace {

using numerics::mma_a_element;
using numerics::mma_b_element;
using numerics::mma_c_element;

constexpr int kChains = 8;     // independent accumulators per warp: hides the HMMA latency
constexpr int kThreads = 128;  // 4 warps, one per SM sub-partition

__device__ inline long long global_nanos() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Instruction bodies exist only from the architecture that has the instruction; below it they
// are a trap (the host never launches there, peak_unsupported_reason says why).
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#define TCB_FROM_SM80(body) body
#else
#define TCB_FROM_SM80(body) __trap()
#endif
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 890
#define TCB_FROM_SM89(body) body
#else
#define TCB_FROM_SM89(body) __trap()
#endif

// An Op with four FP32 accumulators, 4 A and 2 B registers: one struct per instruction, differing
// only in its PTX type suffix, its input width, the architecture that has it and kNegate, the
// bits that flip the sign of every element of a B register (the -B of the alternating loop).
#define TCB_MMA_F32X4_OP(Name, FROM_ARCH, shape_types, per_reg, bytes, negate)                     \
  struct Name {                                                                                    \
    static constexpr int kARegs = 4, kBRegs = 2, kCRegs = 4, kPerReg = per_reg, kBytes = bytes;    \
    static constexpr std::uint32_t kNegate = negate;                                               \
    using Acc = float;                                                                             \
    __device__ static void mma(float (&d)[4], const std::uint32_t (&a)[4],                         \
                               const std::uint32_t (&b)[2]) {                                      \
      FROM_ARCH(asm volatile("mma.sync.aligned." shape_types                                       \
                             " {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};"              \
                             : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                      \
                             : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))); \
    }                                                                                              \
    __device__ static double element(const float (&d)[4], int e) { return d[e]; }                  \
  }

TCB_MMA_F32X4_OP(MmaF16F32, TCB_FROM_SM80, "m16n8k16.row.col.f32.f16.f16.f32", 2, 2, 0x80008000u);
TCB_MMA_F32X4_OP(MmaBf16F32, TCB_FROM_SM80, "m16n8k16.row.col.f32.bf16.bf16.f32", 2, 2,
                 0x80008000u);
TCB_MMA_F32X4_OP(MmaTf32F32, TCB_FROM_SM80, "m16n8k8.row.col.f32.tf32.tf32.f32", 1, 4, 0x80000000u);
TCB_MMA_F32X4_OP(MmaE4m3F32, TCB_FROM_SM89, "m16n8k32.row.col.f32.e4m3.e4m3.f32", 4, 1,
                 0x80808080u);

// FP16 accumulation: two f16x2 registers hold the four accumulator elements.
struct MmaF16F16 {
  static constexpr int kARegs = 4, kBRegs = 2, kCRegs = 2, kPerReg = 2, kBytes = 2;
  static constexpr std::uint32_t kNegate = 0x80008000u;
  using Acc = std::uint32_t;
  __device__ static void mma(std::uint32_t (&d)[2], const std::uint32_t (&a)[4],
                             const std::uint32_t (&b)[2]) {
    TCB_FROM_SM80(asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0,%1}, {%2,%3,%4,%5}, {%6,%7}, "
        "{%0,%1};"
        : "+r"(d[0]), "+r"(d[1])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1])));
  }
  __device__ static double element(const std::uint32_t (&d)[2], int e) {
    const std::uint32_t reg = d[e / 2];
    const unsigned short bits = static_cast<unsigned short>(e % 2 ? reg >> 16 : reg & 0xffffu);
    return __half2float(__ushort_as_half(bits));
  }
};

// INT8: four s32 accumulators. Integer addition is exact, so the sum grows (kNegate 0: no -B).
struct MmaS8S32 {
  static constexpr int kARegs = 4, kBRegs = 2, kCRegs = 4, kPerReg = 4, kBytes = 1;
  static constexpr std::uint32_t kNegate = 0;
  using Acc = int;
  __device__ static void mma(int (&d)[4], const std::uint32_t (&a)[4],
                             const std::uint32_t (&b)[2]) {
    TCB_FROM_SM80(asm volatile(
        "mma.sync.aligned.m16n8k32.row.col.s32.s8.s8.s32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};"
        : "+r"(d[0]), "+r"(d[1]), "+r"(d[2]), "+r"(d[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1])));
  }
  __device__ static double element(const int (&d)[4], int e) { return d[e]; }
};

// Reads element `index` (raw bits, Op::kBytes wide) of a tile.
template <class Op>
__device__ inline std::uint32_t raw_element(const std::uint8_t* tile, int index) {
  const std::uint8_t* p = tile + static_cast<std::size_t>(index) * Op::kBytes;
  if constexpr (Op::kBytes == 4) return *reinterpret_cast<const std::uint32_t*>(p);
  if constexpr (Op::kBytes == 2) return *reinterpret_cast<const std::uint16_t*>(p);
  return *p;
}

template <class Op>
__global__ void __launch_bounds__(kThreads)
    tensor_peak_mma_kernel(const std::uint8_t* __restrict__ a, const std::uint8_t* __restrict__ b,
                           double* __restrict__ out, PeakClocks* __restrict__ clocks,
                           long long iterations, bool alternate) {
  constexpr int kK = 8 * Op::kPerReg;  // the instruction's k: 8, 16 or 32
  constexpr int kBits = 8 * Op::kBytes;
  const int lane = threadIdx.x % 32;

  // Fragments, packed lower element in the lower bits, as the PTX ISA specifies.
  std::uint32_t ra[Op::kARegs] = {}, rb[Op::kBRegs] = {}, rb_second[Op::kBRegs];
  for (int e = 0; e < Op::kARegs * Op::kPerReg; ++e) {
    const numerics::RowCol rc = mma_a_element(lane, e, Op::kPerReg);
    ra[e / Op::kPerReg] |= raw_element<Op>(a, rc.row * kK + rc.col) << (kBits * (e % Op::kPerReg));
  }
  for (int e = 0; e < Op::kBRegs * Op::kPerReg; ++e) {
    const numerics::RowCol rc = mma_b_element(lane, e, Op::kPerReg);
    rb[e / Op::kPerReg] |= raw_element<Op>(b, rc.col * kK + rc.row) << (kBits * (e % Op::kPerReg));
  }
  // -B for the alternating (floating-point) accumulators: every element's sign bit flipped.
#pragma unroll
  for (int r = 0; r < Op::kBRegs; ++r) rb_second[r] = alternate ? rb[r] ^ Op::kNegate : rb[r];

  typename Op::Acc acc[kChains][Op::kCRegs] = {};
  long long cycles0 = 0, nanos0 = 0;
  __syncthreads();
  if (threadIdx.x == 0) {
    cycles0 = clock64();
    nanos0 = global_nanos();
  }
  // One trip per loop body: the SASS test counts one trip's mma.sync in the hot loop, so ptxas
  // folding identical products (as it does for emulated FP8 on sm_90) cannot hide in unrolling.
  // 16 tensor instructions per trip dwarf the loop's 4 or 5 counter and branch instructions.
#pragma unroll 1
  for (long long it = 0; it < iterations; ++it) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) Op::mma(acc[c], ra, rb);
#pragma unroll
    for (int c = 0; c < kChains; ++c) Op::mma(acc[c], ra, rb_second);
  }
#pragma unroll
  for (int c = 0; c < kChains; ++c) Op::mma(acc[c], ra, rb);
  __syncthreads();
  if (threadIdx.x == 0) clocks[blockIdx.x] = {clock64() - cycles0, global_nanos() - nanos0};

  // out[warp][chain][row][col], 16 x 8 per chain, as doubles (exact for every accumulator).
  const std::size_t warp = blockIdx.x * (kThreads / 32) + threadIdx.x / 32;
#pragma unroll
  for (int c = 0; c < kChains; ++c)
    for (int e = 0; e < 4; ++e) {
      const numerics::RowCol rc = mma_c_element(lane, e);
      out[((warp * kChains + c) * 16 + rc.row) * 8 + rc.col] = Op::element(acc[c], e);
    }
}

template <class Op>
void launch(const PeakLaunch& launch, const PeakBuffers& buf, bool alternate, cudaStream_t s) {
  if (alternate && Op::kNegate == 0)
    throw InvalidArgument("launch_mma_peak: this instruction's inputs have no sign bit to flip");
  tensor_peak_mma_kernel<Op><<<launch.blocks, kThreads, 0, s>>>(
      static_cast<const std::uint8_t*>(buf.a), static_cast<const std::uint8_t*>(buf.b),
      static_cast<double*>(buf.out), buf.clocks, launch.iterations, alternate);
}

template <class Op>
int blocks_per_sm() {
  int blocks = 0;
  TCB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, tensor_peak_mma_kernel<Op>,
                                                         kThreads, 0));
  return blocks;
}

}  // namespace

int mma_chains() {
  return kChains;
}

void launch_mma_peak(PeakInstr instr, const PeakLaunch& l, const PeakBuffers& buf, cudaStream_t s) {
  const bool alt = info(instr).alternate;
  switch (instr) {
    case PeakInstr::mma_f16_f32:
      return launch<MmaF16F32>(l, buf, alt, s);
    case PeakInstr::mma_f16_f16:
      return launch<MmaF16F16>(l, buf, alt, s);
    case PeakInstr::mma_bf16_f32:
      return launch<MmaBf16F32>(l, buf, alt, s);
    case PeakInstr::mma_tf32_f32:
      return launch<MmaTf32F32>(l, buf, alt, s);
    case PeakInstr::mma_s8_s32:
      return launch<MmaS8S32>(l, buf, alt, s);
    case PeakInstr::mma_e4m3_f32:
      return launch<MmaE4m3F32>(l, buf, alt, s);
    default:
      throw InvalidArgument("launch_mma_peak: not an mma.sync instruction");
  }
}

int mma_blocks_per_sm(PeakInstr instr) {
  switch (instr) {
    case PeakInstr::mma_f16_f32:
      return blocks_per_sm<MmaF16F32>();
    case PeakInstr::mma_f16_f16:
      return blocks_per_sm<MmaF16F16>();
    case PeakInstr::mma_bf16_f32:
      return blocks_per_sm<MmaBf16F32>();
    case PeakInstr::mma_tf32_f32:
      return blocks_per_sm<MmaTf32F32>();
    case PeakInstr::mma_s8_s32:
      return blocks_per_sm<MmaS8S32>();
    case PeakInstr::mma_e4m3_f32:
      return blocks_per_sm<MmaE4m3F32>();
    default:
      throw InvalidArgument("mma_blocks_per_sm: not an mma.sync instruction");
  }
}

}  // namespace tcbench::kernels::detail
