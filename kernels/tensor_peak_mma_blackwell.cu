// Tensor-peak kernels for GeForce and workstation Blackwell (compute capability 12.x), which has
// no tcgen05: mma.sync's FP8/FP6/FP4 kinds are its tensor path. .kind::f8f6f4 m16n8k32 (QMMA,
// every element in an 8-bit container) for E5M2, E2M3, E3M2 and E2M1 (E4M3's plain-syntax row
// is tensor_peak_mma.cu's), and the block-scaled .kind::mxf8f6f4 m16n8k32 (QMMA.SF, UE8M0 per
// 32 elements) and .kind::mxf4nvf4 m16n8k64 (OMMA.SF, packed E2M1: UE4M3 per 16 or UE8M0 per 32).
// The kernel is the mma.sync one (tensor_peak_mma_kernel.cuh); the block scales are constants in
// every byte of the scale registers (A 2.0, B 1.0: kPeakScale*), so any byte/thread selector
// reads them and the check expects the product x 2.
//
// Sources: PTX ISA, "Warp-level matrix multiply-accumulate instructions" (mma with .kind,
// .block_scale and .scale_vec; the m16n8k32 and m16n8k64 fragments), and
// tcbench/numerics/mma_operands.hpp for the containers.
//
// Built in the family-specific Blackwell library (sm_100f, sm_110f, sm_120f: kernels/
// CMakeLists.txt); ptxas accepts these kinds for sm_120f (12.0 and 12.1) only, so the bodies are
// guarded and the sm_100f/sm_110f cubins hold a trap.
#include "tcbench/error.hpp"
#include "tcbench/kernels/tensor_peak.hpp"
#include "tensor_peak_detail.hpp"
#include "tensor_peak_mma_kernel.cuh"

#include <cstdint>

#if defined(__CUDA_ARCH__) && defined(__CUDA_ARCH_FAMILY_SPECIFIC__) && \
    __CUDA_ARCH_FAMILY_SPECIFIC__ == 1200
#define TCB_SM120F(statement) statement
#else
#define TCB_SM120F(statement) __trap()
#endif

namespace tcbench::kernels::detail {
namespace {

#define TCB_MMA_OPERANDS "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3}"
#define TCB_MMA_SCALES ", {%10}, {%11, %12}, {%13}, {%14, %15}"

// One Op per instruction: kPerReg elements of kBits bits per register, the sign bits of a B
// register (kNegate), and the PTX; `scaled` adds the block-scale operands: scale registers whose
// every byte is the scale (kSfA, kSfB; the byte and thread selectors are 0).
#define TCB_BLACKWELL_MMA_OP(Name, per_reg, bits, negate, instruction, scaled, sf_a, sf_b)         \
  struct Name {                                                                                    \
    static constexpr int kARegs = 4, kBRegs = 2, kCRegs = 4, kPerReg = per_reg, kBytes = 1;        \
    static constexpr int kBits = bits;                                                             \
    static constexpr std::uint32_t kNegate = negate;                                               \
    static constexpr std::uint32_t kSfA = sf_a * 0x01010101u, kSfB = sf_b * 0x01010101u;           \
    using Acc = float;                                                                             \
    __device__ static void mma(float (&d)[4], const std::uint32_t (&a)[4],                         \
                               const std::uint32_t (&b)[2]) {                                      \
      (void)kSfA, (void)kSfB; /* unused where the body is a trap */                                \
      if constexpr (scaled)                                                                        \
        TCB_SM120F(asm volatile(                                                                   \
            "mma.sync.aligned." instruction " " TCB_MMA_OPERANDS TCB_MMA_SCALES ";"                \
            : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                       \
            : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]), "r"(kSfA),         \
              "h"(static_cast<unsigned short>(0)), "h"(static_cast<unsigned short>(0)), "r"(kSfB), \
              "h"(static_cast<unsigned short>(0)), "h"(static_cast<unsigned short>(0))));          \
      else                                                                                         \
        TCB_SM120F(                                                                                \
            asm volatile("mma.sync.aligned." instruction " " TCB_MMA_OPERANDS ";"                  \
                         : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                          \
                         : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1])));     \
    }                                                                                              \
    __device__ static double element(const float (&d)[4], int e) { return d[e]; }                  \
  }

// Sign bits: E5M2 bit 7 of each byte; E2M3/E3M2 bit 5 (bits [0,6) of the container); E2M1 bit 5
// (bits [2,6)); packed E2M1 bit 3 of each nibble.
TCB_BLACKWELL_MMA_OP(MmaF8f6f4E5m2, 4, 8, 0x80808080u,
                     "kind::f8f6f4.m16n8k32.row.col.f32.e5m2.e5m2.f32", false, 0u, 0u);
TCB_BLACKWELL_MMA_OP(MmaF8f6f4E2m3, 4, 8, 0x20202020u,
                     "kind::f8f6f4.m16n8k32.row.col.f32.e2m3.e2m3.f32", false, 0u, 0u);
TCB_BLACKWELL_MMA_OP(MmaF8f6f4E3m2, 4, 8, 0x20202020u,
                     "kind::f8f6f4.m16n8k32.row.col.f32.e3m2.e3m2.f32", false, 0u, 0u);
TCB_BLACKWELL_MMA_OP(MmaF8f6f4E2m1, 4, 8, 0x20202020u,
                     "kind::f8f6f4.m16n8k32.row.col.f32.e2m1.e2m1.f32", false, 0u, 0u);
TCB_BLACKWELL_MMA_OP(MmaMxf8f6f4E4m3, 4, 8, 0x80808080u,
                     "kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.row.col.f32.e4m3.e4m3.f32."
                     "ue8m0",
                     true, kPeakScaleAE8m0, kPeakScaleBE8m0);
TCB_BLACKWELL_MMA_OP(MmaNvf4, 8, 4, 0x88888888u,
                     "kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.row.col.f32.e2m1.e2m1.f32."
                     "ue4m3",
                     true, kPeakScaleAUe4m3, kPeakScaleBUe4m3);
TCB_BLACKWELL_MMA_OP(MmaMxf4, 8, 4, 0x88888888u,
                     "kind::mxf4nvf4.block_scale.scale_vec::2X.m16n8k64.row.col.f32.e2m1.e2m1.f32."
                     "ue8m0",
                     true, kPeakScaleAE8m0, kPeakScaleBE8m0);

template <template <class> class Action>
auto dispatch(PeakInstr instr) {
  switch (instr) {
    case PeakInstr::mma_f8f6f4_e5m2:
      return Action<MmaF8f6f4E5m2>::run;
    case PeakInstr::mma_f8f6f4_e2m3:
      return Action<MmaF8f6f4E2m3>::run;
    case PeakInstr::mma_f8f6f4_e3m2:
      return Action<MmaF8f6f4E3m2>::run;
    case PeakInstr::mma_f8f6f4_e2m1:
      return Action<MmaF8f6f4E2m1>::run;
    case PeakInstr::mma_mxf8f6f4_e4m3:
      return Action<MmaMxf8f6f4E4m3>::run;
    case PeakInstr::mma_mxf4nvf4_nvf4:
      return Action<MmaNvf4>::run;
    case PeakInstr::mma_mxf4nvf4_mxf4:
      return Action<MmaMxf4>::run;
    default:
      throw InvalidArgument("launch_mma_blackwell_peak: " + std::string(info(instr).ptx) +
                            " is not one of GeForce Blackwell's mma.sync kinds");
  }
}

template <class Op>
struct Launch {
  static void run(const PeakLaunch& l, const PeakBuffers& b, bool alternate, cudaStream_t s) {
    launch<Op>(l, b, alternate, s);
  }
};
template <class Op>
struct Blocks {
  static int run() { return blocks_per_sm<Op>(); }
};

}  // namespace

void launch_mma_blackwell_peak(PeakInstr instr, const PeakLaunch& l, const PeakBuffers& buf,
                               cudaStream_t s) {
  dispatch<Launch>(instr)(l, buf, info(instr).alternate, s);
}

int mma_blackwell_blocks_per_sm(PeakInstr instr) {
  return dispatch<Blocks>(instr)();
}

}  // namespace tcbench::kernels::detail
