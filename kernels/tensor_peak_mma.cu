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
#include "tensor_peak_mma_kernel.cuh"

#include <cuda_fp16.h>

#include <cstdint>

namespace tcbench::kernels::detail {
namespace {

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
    static constexpr int kBits = 8 * bytes;                                                        \
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
  static constexpr int kARegs = 4, kBRegs = 2, kCRegs = 2, kPerReg = 2, kBytes = 2, kBits = 16;
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
  static constexpr int kARegs = 4, kBRegs = 2, kCRegs = 4, kPerReg = 4, kBytes = 1, kBits = 8;
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
