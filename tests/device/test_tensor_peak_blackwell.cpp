// The Blackwell rows of bench_tensor_peak on the host (no GPU): where each runs and the one
// sentence everywhere else, what a tcgen05 row passes its kernel (the instruction descriptor,
// checked against the golden values tests/host/numerics/test_mma_descriptors.cpp derives from
// the documented fields, and the block scales), the operand bytes, the operation count of a
// pair, and the rate the SMs x clock model reads. The device test of every row (exact
// accumulators) is test_tensor_peak.cpp's TensorPeak suite, which skips here.
#include "tcbench/error.hpp"
#include "tcbench/instruction_rates.hpp"
#include "tcbench/kernels/tensor_peak.hpp"
#include "tcbench/numerics/narrow_formats.hpp"
#include "tcbench/peaks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>

namespace tcbench::kernels {
namespace {

std::vector<PeakInstr> family(PeakFamily f, bool blackwell_kinds_only = false) {
  std::vector<PeakInstr> out;
  for (PeakInstr instr : kAllPeakInstrs)
    if (info(instr).family == f && (!blackwell_kinds_only || info(instr).kind.has_value()))
      out.push_back(instr);
  return out;
}

TEST(TensorPeakBlackwell, EveryRowHasItsOwnName) {
  std::set<std::string> names;
  for (PeakInstr instr : kAllPeakInstrs) {
    const PeakInstrInfo& i = info(instr);
    EXPECT_TRUE(names.insert(std::string(i.variant) + "/" + std::string(name(i.precision))).second)
        << i.variant << "/" << name(i.precision);
  }
  EXPECT_EQ(family(PeakFamily::tcgen05).size(), 24u);  // 12 kinds and inputs x 2 CTA forms
  EXPECT_EQ(family(PeakFamily::mma_sync, true).size(), 7u);
}

TEST(TensorPeakBlackwell, Tcgen05RunsOn10x0And10x3OnlyAndSaysSoElsewhere) {
  for (PeakInstr instr : family(PeakFamily::tcgen05)) {
    const bool i8 = info(instr).kind == TensorKind::tcgen05_i8;
    EXPECT_FALSE(peak_unsupported_reason(instr, 10, 0).has_value()) << info(instr).ptx;
    EXPECT_EQ(peak_unsupported_reason(instr, 10, 3).has_value(), i8) << info(instr).ptx;
    for (auto [major, minor] : {std::pair{9, 0}, {8, 0}, {11, 0}, {12, 0}, {12, 1}, {7, 5}}) {
      const auto why = peak_unsupported_reason(instr, major, minor);
      ASSERT_TRUE(why.has_value()) << info(instr).ptx << " on " << major << "." << minor;
      EXPECT_EQ(*why,
                "tcgen05.mma exists only on datacenter Blackwell (compute capability 10.0 and "
                "10.3, built as sm_100a and sm_103a); this GPU is " +
                    std::to_string(major) + "." + std::to_string(minor));
    }
  }
  EXPECT_EQ(*peak_unsupported_reason(PeakInstr::tc2_s8, 10, 3),
            "tcgen05.mma .kind::i8 exists on compute capability 10.0 only (the PTX ISA gives it to "
            "sm_100a, not sm_103a); this GPU is 10.3");
}

TEST(TensorPeakBlackwell, GeForceKindsRunOn12xOnlyAndSayWhichKind) {
  for (PeakInstr instr : family(PeakFamily::mma_sync, true)) {
    EXPECT_FALSE(peak_unsupported_reason(instr, 12, 0).has_value()) << info(instr).ptx;
    EXPECT_FALSE(peak_unsupported_reason(instr, 12, 1).has_value()) << info(instr).ptx;
    for (auto [major, minor] : {std::pair{10, 0}, {10, 3}, {9, 0}, {8, 9}}) {
      const auto why = peak_unsupported_reason(instr, major, minor);
      ASSERT_TRUE(why.has_value()) << info(instr).ptx;
      EXPECT_NE(why->find("exists only on GeForce and workstation Blackwell (compute capability "
                          "12.x, built as sm_120f); this GPU is " +
                          std::to_string(major) + "." + std::to_string(minor)),
                std::string::npos)
          << *why;
    }
  }
  EXPECT_EQ(peak_unsupported_reason(PeakInstr::mma_mxf4nvf4_nvf4, 9, 0)->substr(0, 50),
            "mma.sync's kind::mxf4nvf4.block_scale exists only ");
}

TEST(TensorPeakBlackwell, TheBlockScalesAreTwoAndOne) {
  EXPECT_EQ(numerics::decode_e8m0(kPeakScaleAE8m0), 2.0f);
  EXPECT_EQ(numerics::decode_e8m0(kPeakScaleBE8m0), 1.0f);
  EXPECT_EQ(numerics::decode_ue4m3(kPeakScaleAUe4m3), 2.0f);
  EXPECT_EQ(numerics::decode_ue4m3(kPeakScaleBUe4m3), 1.0f);
  for (PeakInstr instr : kAllPeakInstrs) {
    const PeakInstrInfo& i = info(instr);
    const bool scaled = i.kind == TensorKind::tcgen05_mxf8f6f4 ||
                        i.kind == TensorKind::tcgen05_mxf4nvf4 ||
                        i.kind == TensorKind::mma_mxf8f6f4 || i.kind == TensorKind::mma_mxf4nvf4;
    EXPECT_EQ(i.scale, scaled ? 2.0 : 1.0) << i.ptx;
  }
}

TEST(TensorPeakBlackwell, Tcgen05OperandsAreTheDocumentedDescriptors) {
  // Goldens of test_mma_descriptors.cpp: M 128 (256 for a pair) x N 256, K-major.
  EXPECT_EQ(peak_tcgen05_operands(PeakInstr::tc1_f16).idesc, 0x0840'0010u);
  EXPECT_EQ(peak_tcgen05_operands(PeakInstr::tc1_bf16).idesc, 0x0840'0490u);
  EXPECT_EQ(peak_tcgen05_operands(PeakInstr::tc1_tf32).idesc, 0x0840'0910u);
  EXPECT_EQ(peak_tcgen05_operands(PeakInstr::tc1_e2m3).idesc, 0x0840'0D90u);
  EXPECT_EQ(peak_tcgen05_operands(PeakInstr::tc1_e2m1).idesc, 0x0840'1690u);
  EXPECT_EQ(peak_tcgen05_operands(PeakInstr::tc1_s8).idesc, 0x0840'04A0u);
  EXPECT_EQ(peak_tcgen05_operands(PeakInstr::tc2_f16).idesc, 0x1040'0010u);
  const PeakTcgen05Operands mx = peak_tcgen05_operands(PeakInstr::tc1_mxf8_e4m3);
  EXPECT_EQ(mx.idesc, 0x08C0'0000u);
  EXPECT_EQ(mx.sf_a, 0x8080'8080u);
  EXPECT_EQ(mx.sf_b, 0x7F7F'7F7Fu);
  EXPECT_EQ(mx.scale_vec, 1);
  const PeakTcgen05Operands nvf4 = peak_tcgen05_operands(PeakInstr::tc1_nvf4);
  EXPECT_EQ(nvf4.idesc, 0x0840'0480u);
  EXPECT_EQ(nvf4.sf_a, 0x4040'4040u);
  EXPECT_EQ(nvf4.sf_b, 0x3838'3838u);
  EXPECT_EQ(nvf4.scale_vec, 4);
  const PeakTcgen05Operands mxf4 = peak_tcgen05_operands(PeakInstr::tc2_mxf4);
  EXPECT_EQ(mxf4.idesc, 0x10C0'0480u);
  EXPECT_EQ(mxf4.scale_vec, 2);
  EXPECT_EQ(peak_tcgen05_operands(PeakInstr::tc1_f16).sf_a, 0u);
  EXPECT_THROW(peak_tcgen05_operands(PeakInstr::wgmma_f16_f32), InvalidArgument);
  for (PeakInstr instr : family(PeakFamily::tcgen05))
    EXPECT_NE(peak_tcgen05_operands(instr).idesc, 0u) << info(instr).ptx;
}

TEST(TensorPeakBlackwell, Tcgen05InputsAreCoreMatrixRowsWithTheSecondBNegated) {
  // A: 8 rows of 16 bytes; B: 8 rows, then the second instruction's 8 (-B, or B again for i8).
  for (PeakInstr instr : family(PeakFamily::tcgen05)) {
    const std::vector<std::uint8_t> a = peak_input_a(instr), b = peak_input_b(instr);
    ASSERT_EQ(a.size(), 128u);
    ASSERT_EQ(b.size(), 256u);
    const bool differ = !std::equal(b.begin(), b.begin() + 128, b.begin() + 128);
    EXPECT_EQ(differ, info(instr).alternate) << info(instr).ptx;
  }
  // f16 rows: b(0, c) = (c + 1) % 3 - 1: 0, 1, -1, ...; row 1 is eight 0x3C00, its negation
  // eight 0xBC00.
  const std::vector<std::uint8_t> b = peak_input_b(PeakInstr::tc1_f16);
  EXPECT_EQ(b[16], 0x00);
  EXPECT_EQ(b[17], 0x3C);
  EXPECT_EQ(b[128 + 17], 0xBC);
  // NVFP4 rows pack two E2M1 per byte: +1 is 0x22, -1 0xAA.
  const std::vector<std::uint8_t> f4 = peak_input_b(PeakInstr::tc1_nvf4);
  EXPECT_EQ(f4[16], 0x22);
  EXPECT_EQ(f4[128 + 16], 0xAA);
  EXPECT_EQ(f4[2 * 16], 0xAA);  // b(0, 2) = -1
}

TEST(TensorPeakBlackwell, GeForceFp4AndFp6SitInTheirContainers) {
  // mma.sync .kind::f8f6f4 E2M1: the code in bits [2,6); a(0, 1) = 1 -> 0b0010 << 2 = 0x08.
  EXPECT_EQ(peak_input_a(PeakInstr::mma_f8f6f4_e2m1)[1], 0x08);
  EXPECT_EQ(peak_input_a(PeakInstr::mma_f8f6f4_e2m3)[1], 0x08);  // E2M3 1.0, bits [0,6)
  EXPECT_EQ(peak_input_a(PeakInstr::mma_f8f6f4_e3m2)[1], 0x0C);
  // .kind::mxf4nvf4: the bare 4-bit code (the kernel packs eight per register).
  EXPECT_EQ(peak_input_a(PeakInstr::mma_mxf4nvf4_nvf4)[1], 0x02);
  EXPECT_EQ(peak_input_a(PeakInstr::mma_mxf4nvf4_nvf4).size(), 16u * 64u);
}

TEST(TensorPeakBlackwell, APairIsOneIssuerAndItsInstructionSpansBothCtas) {
  // 4 blocks = 2 pairs x (2 x 5 + 1) instructions x 2 * 256 * 256 * 16.
  EXPECT_DOUBLE_EQ(peak_ops(PeakInstr::tc2_f16, {4, 5}), 2.0 * 11 * 2 * 256 * 256 * 16);
  // One CTA: 3 blocks x 11 x 2 * 128 * 256 * 64 (NVFP4's K).
  EXPECT_DOUBLE_EQ(peak_ops(PeakInstr::tc1_nvf4, {3, 5}), 3.0 * 11 * 2 * 128 * 256 * 64);
  EXPECT_EQ(peak_issuers_per_block(PeakInstr::tc2_s8), 0.5);
  // Each CTA writes its 128 rows of 256 doubles: the pair's 256 x 256 tile.
  EXPECT_EQ(peak_out_bytes(PeakInstr::tc2_bf16, {6, 1}), 6u * 128 * 256 * sizeof(double));
  EXPECT_EQ(peak_check_magnitude(PeakInstr::tc1_nvf4, {1, 1000}), 128.0);  // K 64 x scale 2
}

TEST(TensorPeakBlackwell, TheModelReadsTheInstructionsOwnRate) {
  // kind::f8f6f4 runs FP4 at the FP8 rate, half the FP4 rate of the peak table; NVFP4 reaches it.
  EXPECT_EQ(peak_ops_per_clock_per_sm(PeakInstr::tc1_e2m1, 10, 0, false), 16384.0);
  EXPECT_EQ(ops_per_clock_per_sm(10, 0, Precision::fp4, false), 32768.0);
  EXPECT_EQ(peak_ops_per_clock_per_sm(PeakInstr::tc1_nvf4, 10, 0, false), 32768.0);
  EXPECT_EQ(peak_ops_per_clock_per_sm(PeakInstr::tc2_nvf4, 10, 3, false), 49152.0);
  EXPECT_EQ(peak_ops_per_clock_per_sm(PeakInstr::tc1_s8, 10, 3, false), 0.0);  // no kind::i8
  EXPECT_EQ(peak_ops_per_clock_per_sm(PeakInstr::mma_f8f6f4_e2m1, 12, 0, true), 1024.0);
  EXPECT_EQ(peak_ops_per_clock_per_sm(PeakInstr::mma_mxf4nvf4_nvf4, 12, 0, true), 4096.0);
  // Rows without a kind keep their precision's rate.
  EXPECT_EQ(peak_ops_per_clock_per_sm(PeakInstr::wgmma_f16_f32, 9, 0, false),
            ops_per_clock_per_sm(9, 0, Precision::fp16, false));
}

TEST(TensorPeakBlackwell, ABuildWithoutBlackwellKernelsSaysSo) {
  // Both Blackwell libraries are built under the same condition (kernels/CMakeLists.txt); the
  // portable rows are always there.
  EXPECT_EQ(peak_build_reason(PeakInstr::tc1_f16).has_value(),
            peak_build_reason(PeakInstr::mma_f8f6f4_e2m1).has_value());
  for (PeakInstr instr : {PeakInstr::mma_f16_f32, PeakInstr::wgmma_s8_s32})
    EXPECT_FALSE(peak_build_reason(instr).has_value());
  if (const auto why = peak_build_reason(PeakInstr::tc1_f16)) {
    EXPECT_NE(why->find("TCBENCH_CUDA_ARCHS names a Blackwell architecture"), std::string::npos);
  }
}

}  // namespace
}  // namespace tcbench::kernels
