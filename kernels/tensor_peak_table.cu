// The tensor-peak instructions: one row each (shape, family, input, accumulator model, rate
// row), where each runs, what this build holds, and what a tcgen05 row passes its kernel.
#include "tcbench/error.hpp"
#include "tcbench/gemm_spec.hpp"
#include "tcbench/kernels/tensor_peak.hpp"
#include "tcbench/numerics/mma_descriptors.hpp"
#include "tcbench/numerics/narrow_formats.hpp"
#include "tcbench/peaks.hpp"

#include <array>
#include <string>

namespace tcbench::kernels {
namespace {

using P = Precision;
using F = PeakFamily;
using K = TensorKind;
using In = numerics::MmaInput;

// mma.sync: 16 x 8 x k, 8 chains per warp, 4 warps. Floating-point accumulators alternate.
constexpr PeakInstrInfo mma(std::string_view variant, std::string_view ptx, P p, int k, In in,
                            int fraction_bits, std::optional<K> kind = std::nullopt,
                            double scale = 1) {
  const bool integer = in == In::s8;
  return {variant, ptx,           p, 16,    8,   k, F::mma_sync, in, integer, !integer, 8,
          128,     fraction_bits, 1, scale, kind};
}
// wgmma: 64 x 256 x k into one accumulator per warpgroup.
constexpr PeakInstrInfo wgmma(std::string_view variant, std::string_view ptx, P p, int k, In in,
                              int fraction_bits) {
  const bool integer = in == In::s8;
  return {variant, ptx,      p, 64,  256,           k, F::wgmma, in,
          integer, !integer, 1, 128, fraction_bits, 1, 1,        std::nullopt};
}
// tcgen05: (128 x CTAs) x 256 x k into one TMEM accumulator per CTA group.
constexpr PeakInstrInfo tc(int ctas, std::string_view variant, std::string_view ptx, P p, int k,
                           In in, K kind, int fraction_bits, double scale = 1) {
  const bool integer = kind == K::tcgen05_i8;
  return {variant, ptx,      p, 128 * ctas, 256,           k,    F::tcgen05, in,
          integer, !integer, 1, 128,        fraction_bits, ctas, scale,      kind};
}

// Accumulator fraction bits (tensor_accumulator.hpp): 23 for FP32 from 16/19-bit inputs, 10 for
// FP16, 13 for FP32 from 8-bit and narrower inputs, 0 for s32. 13 is the narrowest published
// width (Ada/Hopper mma: the SageAttention2 paper, thu-ml/SageAttention #287; about 14 on H800:
// DeepSeek-V3 §3.3); tcgen05 reportedly keeps about 25 (deepseek-ai/DeepGEMM #176) and GeForce
// Blackwell's is unpublished, so 13 is the safe width for every exact check. bench_fp8's
// accumulator rows measure it per GPU (docs/concepts/fp8-scaling.md). Block-scaled rows scale
// A by 2 (scale 2.0 x 1.0). Every floating-point accumulator alternates +B/-B, so |acc| <= k x
// scale = 128 at most: far below the exact limit of its model (2^13), whatever the loop's length.
constexpr std::array<PeakInstrInfo, kNumPeakInstrs> kInfo{{
    mma("mma_m16n8k16", "mma.sync.m16n8k16.f32.f16.f16.f32", P::fp16, 16, In::f16, 23),
    mma("mma_m16n8k16", "mma.sync.m16n8k16.f16.f16.f16.f16", P::fp16_acc16, 16, In::f16, 10),
    mma("mma_m16n8k16", "mma.sync.m16n8k16.f32.bf16.bf16.f32", P::bf16, 16, In::bf16, 23),
    mma("mma_m16n8k8", "mma.sync.m16n8k8.f32.tf32.tf32.f32", P::tf32, 8, In::tf32, 23),
    mma("mma_m16n8k32", "mma.sync.m16n8k32.s32.s8.s8.s32", P::int8, 32, In::s8, 0),
    mma("mma_m16n8k32", "mma.sync.m16n8k32.f32.e4m3.e4m3.f32", P::fp8, 32, In::e4m3, 13),
    wgmma("wgmma_m64n256k16", "wgmma.m64n256k16.f32.f16.f16", P::fp16, 16, In::f16, 23),
    wgmma("wgmma_m64n256k16", "wgmma.m64n256k16.f32.bf16.bf16", P::bf16, 16, In::bf16, 23),
    wgmma("wgmma_m64n256k32", "wgmma.m64n256k32.f32.e4m3.e4m3", P::fp8, 32, In::e4m3, 13),
    wgmma("wgmma_m64n256k32", "wgmma.m64n256k32.s32.s8.s8", P::int8, 32, In::s8, 0),
    mma("mma_f8f6f4_e5m2_m16n8k32", "mma.sync.kind::f8f6f4.m16n8k32.f32.e5m2.e5m2.f32", P::fp8, 32,
        In::e5m2, 13, K::mma_f8f6f4),
    mma("mma_f8f6f4_e2m3_m16n8k32", "mma.sync.kind::f8f6f4.m16n8k32.f32.e2m3.e2m3.f32", P::fp6, 32,
        In::e2m3, 13, K::mma_f8f6f4),
    mma("mma_f8f6f4_e3m2_m16n8k32", "mma.sync.kind::f8f6f4.m16n8k32.f32.e3m2.e3m2.f32", P::fp6, 32,
        In::e3m2, 13, K::mma_f8f6f4),
    mma("mma_f8f6f4_e2m1_m16n8k32", "mma.sync.kind::f8f6f4.m16n8k32.f32.e2m1.e2m1.f32", P::fp4, 32,
        In::e2m1, 13, K::mma_f8f6f4),
    mma("mma_mxf8f6f4_e4m3_m16n8k32",
        "mma.sync.kind::mxf8f6f4.block_scale.scale_vec::1X.m16n8k32.f32.e4m3.e4m3.f32.ue8m0",
        P::fp8, 32, In::e4m3, 13, K::mma_mxf8f6f4, 2),
    mma("mma_mxf4nvf4_nvf4_m16n8k64",
        "mma.sync.kind::mxf4nvf4.block_scale.scale_vec::4X.m16n8k64.f32.e2m1.e2m1.f32.ue4m3",
        P::fp4, 64, In::e2m1, 13, K::mma_mxf4nvf4, 2),
    mma("mma_mxf4nvf4_mxf4_m16n8k64",
        "mma.sync.kind::mxf4nvf4.block_scale.scale_vec::2X.m16n8k64.f32.e2m1.e2m1.f32.ue8m0",
        P::fp4, 64, In::e2m1, 13, K::mma_mxf4nvf4, 2),
#define TCB_TC_ROWS(G, prefix, M)                                                                  \
  tc(G, prefix "_f16_m" M "n256k16", "tcgen05.mma.cta_group::" #G ".kind::f16 f32.f16.f16",        \
     P::fp16, 16, In::f16, K::tcgen05_f16, 23),                                                    \
      tc(G, prefix "_f16_m" M "n256k16", "tcgen05.mma.cta_group::" #G ".kind::f16 f32.bf16.bf16",  \
         P::bf16, 16, In::bf16, K::tcgen05_f16, 23),                                               \
      tc(G, prefix "_tf32_m" M "n256k8", "tcgen05.mma.cta_group::" #G ".kind::tf32 f32.tf32.tf32", \
         P::tf32, 8, In::tf32, K::tcgen05_tf32, 23),                                               \
      tc(G, prefix "_f8f6f4_e4m3_m" M "n256k32",                                                   \
         "tcgen05.mma.cta_group::" #G ".kind::f8f6f4 f32.e4m3.e4m3", P::fp8, 32, In::e4m3,         \
         K::tcgen05_f8f6f4, 13),                                                                   \
      tc(G, prefix "_f8f6f4_e5m2_m" M "n256k32",                                                   \
         "tcgen05.mma.cta_group::" #G ".kind::f8f6f4 f32.e5m2.e5m2", P::fp8, 32, In::e5m2,         \
         K::tcgen05_f8f6f4, 13),                                                                   \
      tc(G, prefix "_f8f6f4_e2m3_m" M "n256k32",                                                   \
         "tcgen05.mma.cta_group::" #G ".kind::f8f6f4 f32.e2m3.e2m3", P::fp6, 32, In::e2m3,         \
         K::tcgen05_f8f6f4, 13),                                                                   \
      tc(G, prefix "_f8f6f4_e3m2_m" M "n256k32",                                                   \
         "tcgen05.mma.cta_group::" #G ".kind::f8f6f4 f32.e3m2.e3m2", P::fp6, 32, In::e3m2,         \
         K::tcgen05_f8f6f4, 13),                                                                   \
      tc(G, prefix "_f8f6f4_e2m1_m" M "n256k32",                                                   \
         "tcgen05.mma.cta_group::" #G ".kind::f8f6f4 f32.e2m1.e2m1", P::fp4, 32, In::e2m1,         \
         K::tcgen05_f8f6f4, 13),                                                                   \
      tc(G, prefix "_i8_m" M "n256k32", "tcgen05.mma.cta_group::" #G ".kind::i8 s32.s8.s8",        \
         P::int8, 32, In::s8, K::tcgen05_i8, 0),                                                   \
      tc(G, prefix "_mxf8f6f4_e4m3_m" M "n256k32",                                                 \
         "tcgen05.mma.cta_group::" #G ".kind::mxf8f6f4.block_scale.scale_vec::1X e4m3 ue8m0",      \
         P::fp8, 32, In::e4m3, K::tcgen05_mxf8f6f4, 13, 2),                                        \
      tc(G, prefix "_mxf4nvf4_nvf4_m" M "n256k64",                                                 \
         "tcgen05.mma.cta_group::" #G ".kind::mxf4nvf4.block_scale.scale_vec::4X e2m1 ue4m3",      \
         P::fp4, 64, In::e2m1, K::tcgen05_mxf4nvf4, 13, 2),                                        \
      tc(G, prefix "_mxf4nvf4_mxf4_m" M "n256k64",                                                 \
         "tcgen05.mma.cta_group::" #G ".kind::mxf4nvf4.block_scale.scale_vec::2X e2m1 ue8m0",      \
         P::fp4, 64, In::e2m1, K::tcgen05_mxf4nvf4, 13, 2)
    TCB_TC_ROWS(1, "tcgen05", "128"),
    TCB_TC_ROWS(2, "tcgen05_2cta", "256"),
#undef TCB_TC_ROWS
}};

std::string cc_text(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

bool geforce_blackwell_kind(const PeakInstrInfo& i) {
  return i.family == F::mma_sync && i.kind.has_value();
}

}  // namespace

const PeakInstrInfo& info(PeakInstr instr) {
  return kInfo.at(static_cast<std::size_t>(instr));
}

std::optional<std::string> peak_unsupported_reason(PeakInstr instr, int cc_major, int cc_minor) {
  const int cc = cc_number(cc_major, cc_minor);
  const PeakInstrInfo& i = info(instr);
  const std::string here = "; this GPU is " + cc_text(cc_major, cc_minor);
  if (i.family == F::wgmma) {
    if (cc != 90)
      return "wgmma exists only on Hopper (compute capability 9.0, built as sm_90a)" + here;
    return std::nullopt;
  }
  if (i.family == F::tcgen05) {
    if (cc != 100 && cc != 103)
      return "tcgen05.mma exists only on datacenter Blackwell (compute capability 10.0 and 10.3, "
             "built as sm_100a and sm_103a)" +
             here;
    if (i.kind == K::tcgen05_i8 && cc != 100)
      return "tcgen05.mma .kind::i8 exists on compute capability 10.0 only (the PTX ISA gives it "
             "to sm_100a, not sm_103a)" +
             here;
    return std::nullopt;
  }
  if (geforce_blackwell_kind(i)) {
    if (cc_major != 12)
      return "mma.sync's " + std::string(kind_name(*i.kind)).substr(9) +
             " exists only on GeForce and workstation Blackwell (compute capability 12.x, built "
             "as sm_120f)" +
             here;
    return std::nullopt;
  }
  if (i.precision == P::fp8 && cc < 89)
    return "FP8 (e4m3) mma.sync needs compute capability 8.9 or newer" + here;
  // Native QMMA on 8.9 and 12.x; in between ptxas emulates it (tests/sass/sass_rules.json).
  if (i.precision == P::fp8 && cc_major == 9)
    return "FP8 mma.sync is emulated through FP16 on compute capability " +
           cc_text(cc_major, cc_minor) + "; Hopper's FP8 tensor path is wgmma";
  if (i.precision == P::fp8 && (cc_major == 10 || cc_major == 11))
    return "FP8 mma.sync is emulated through FP16 on compute capability " +
           cc_text(cc_major, cc_minor) +
           "; Blackwell's FP8 tensor path is tcgen05 (the tensor_peak/tcgen05_* rows)";
  if (cc < 80)
    return "tcbench's mma.sync peak kernels use the sm_80 shapes (m16n8k16, m16n8k8 tf32, "
           "m16n8k32)" +
           here;
  return std::nullopt;
}

std::optional<std::string> peak_build_reason(PeakInstr instr) {
  const PeakInstrInfo& i = info(instr);
#if !defined(TCBENCH_TENSOR_PEAK_TCGEN05)
  if (i.family == F::tcgen05)
    return "this build has no tcgen05 kernels: they are built (as sm_100a and sm_103a) only when "
           "TCBENCH_CUDA_ARCHS names a Blackwell architecture";
#endif
#if !defined(TCBENCH_TENSOR_PEAK_BLACKWELL)
  if (geforce_blackwell_kind(i))
    return "this build has no sm_120f kernels: they are built only when TCBENCH_CUDA_ARCHS names "
           "a Blackwell architecture";
#endif
  (void)i;
  return std::nullopt;
}

double peak_ops_per_clock_per_sm(PeakInstr instr, int cc_major, int cc_minor, bool geforce) {
  const PeakInstrInfo& i = info(instr);
  if (i.kind) return instruction_ops_per_clock_per_sm(*i.kind, cc_major, cc_minor, geforce);
  return ops_per_clock_per_sm(cc_major, cc_minor, i.precision, geforce);
}

PeakTcgen05Operands peak_tcgen05_operands(PeakInstr instr) {
  const PeakInstrInfo& i = info(instr);
  if (i.family != F::tcgen05)
    throw InvalidArgument("peak_tcgen05_operands: " + std::string(i.ptx) +
                          " is not a tcgen05 instruction");
  using numerics::UmmaKind;
  numerics::UmmaShape s{UmmaKind::f16, i.input, i.input, i.m, i.n};
  PeakTcgen05Operands out;
  std::uint32_t sf_a = 0, sf_b = 0;  // one byte each, repeated into the column's four
  switch (*i.kind) {
    case K::tcgen05_f16:
      break;
    case K::tcgen05_tf32:
      s.kind = UmmaKind::tf32;
      break;
    case K::tcgen05_f8f6f4:
      s.kind = UmmaKind::f8f6f4;
      break;
    case K::tcgen05_i8:
      s.kind = UmmaKind::i8;
      s.d = numerics::UmmaDType::s32;
      break;
    case K::tcgen05_mxf8f6f4:
      s.kind = UmmaKind::mxf8f6f4;
      out.scale_vec = 1;
      sf_a = kPeakScaleAE8m0, sf_b = kPeakScaleBE8m0;
      break;
    default: {  // mxf4nvf4: NVFP4 (4X, UE4M3) or MXFP4 (2X, UE8M0)
      s.kind = UmmaKind::mxf4nvf4;
      const bool nvf4 = instr == PeakInstr::tc1_nvf4 || instr == PeakInstr::tc2_nvf4;
      s.scale = nvf4 ? numerics::UmmaScaleType::ue4m3 : numerics::UmmaScaleType::ue8m0;
      out.scale_vec = nvf4 ? 4 : 2;
      sf_a = nvf4 ? kPeakScaleAUe4m3 : kPeakScaleAE8m0;
      sf_b = nvf4 ? kPeakScaleBUe4m3 : kPeakScaleBE8m0;
    }
  }
  out.idesc = numerics::umma_instr_descriptor(s);
  out.sf_a = sf_a * 0x01010101u;
  out.sf_b = sf_b * 0x01010101u;
  if (out.idesc == 0)
    throw InvalidArgument("peak_tcgen05_operands: no instruction descriptor for " +
                          std::string(i.ptx));
  return out;
}

}  // namespace tcbench::kernels
