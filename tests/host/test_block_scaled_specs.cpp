// Every block-scaled GEMM bench_block_scaling runs, validated and turned into descriptors on the
// host (no GPU: descriptors are host objects) and read back through cuBLASLt's getters; and the
// specs cuBLASLt would refuse (wrong architecture, a type the mode does not take, an FP8 output,
// a scale tensor of the wrong size or alignment), rejected with a sentence before it is called.
// Rules: cuBLAS documentation, "Narrow Precision Data Types Usage" and cublasLtMatmul's FP4 table
// (scale_modes.hpp).
#include "tcbench/gemm_lt.hpp"
#include "tcbench/scale_modes.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>

namespace tcbench {
namespace {

// Stand-ins for device pointers: only stored in descriptors, never dereferenced. 16-byte aligned.
alignas(16) unsigned char g_a_scales[64], g_b_scales[64];

struct Case {
  Precision p;
  ScaleMode mode;
  int cc_major, cc_minor;  // where cuBLAS documents it
};
const Case kCases[] = {
    {Precision::fp8, ScaleMode::tensor, 9, 0},     {Precision::fp8, ScaleMode::rowwise, 9, 0},
    {Precision::fp8, ScaleMode::tile_1x128, 9, 0}, {Precision::fp8, ScaleMode::block_128x128, 9, 0},
    {Precision::fp8, ScaleMode::mx, 10, 0},        {Precision::fp8, ScaleMode::mx, 12, 0},
    {Precision::fp4, ScaleMode::nvfp4, 10, 0},     {Precision::fp4, ScaleMode::nvfp4, 12, 0},
};

GemmSpec spec(Precision p, ScaleMode mode, std::int64_t m = 256, std::int64_t n = 384,
              std::int64_t k = 1024) {
  GemmSpec s = GemmSpec::for_scaling(p, mode, m, n, k);
  if (mode != ScaleMode::tensor) {
    s.a_scale = g_a_scales;
    s.b_scale = g_b_scales;
  }
  return s;
}

std::string why(const GemmSpec& s, int ma, int mi) {
  return s.why_invalid(ma, mi).value_or("");
}

TEST(BlockScaledSpecs, EachModeIsValidWhereDocumentedAndItsDescriptorSaysSo) {
  for (const Case& c : kCases) {
    const GemmSpec s = spec(c.p, c.mode);
    ASSERT_EQ(why(s, c.cc_major, c.cc_minor), "") << s.describe();
    const MatmulDesc desc = make_matmul_desc(s);
    const ScaleModeInfo& m = info(c.mode);
    EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_A_SCALE_MODE), m.a_mode)
        << name(c.mode);
    EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_B_SCALE_MODE), m.b_mode);
    EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE), CUBLAS_COMPUTE_32F);
    EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_TRANSA), CUBLAS_OP_T);
    EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_TRANSB), CUBLAS_OP_N);
    if (c.mode != ScaleMode::tensor) {
      EXPECT_EQ(desc.attribute<const void*>(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER), g_a_scales);
      EXPECT_EQ(desc.attribute<const void*>(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER), g_b_scales);
    }
    const GemmLayouts l = make_layouts(s);
    EXPECT_EQ(l.a.attribute<std::uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE), info(c.p).a);
    EXPECT_EQ(l.a.attribute<std::uint64_t>(CUBLASLT_MATRIX_LAYOUT_ROWS), 1024u);  // k x m, TN
    EXPECT_EQ(l.d.attribute<std::uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE), CUDA_R_16BF);
  }
}

TEST(BlockScaledSpecs, TheScaleModeAttributesDefaultToScalarForTensorScaling) {
  const MatmulDesc desc = make_matmul_desc(spec(Precision::fp8, ScaleMode::tensor));
  EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_A_SCALE_MODE),
            CUBLASLT_MATMUL_MATRIX_SCALE_SCALAR_32F);
}

TEST(BlockScaledSpecs, ScaleTensorSizesFollowTheLayouts) {
  // m = 256, n = 384, k = 1024.
  EXPECT_EQ(spec(Precision::fp8, ScaleMode::rowwise).a_scale_count, 256);
  EXPECT_EQ(spec(Precision::fp8, ScaleMode::rowwise).b_scale_count, 384);
  EXPECT_EQ(spec(Precision::fp8, ScaleMode::tile_1x128).a_scale_count, 256 * 8);
  EXPECT_EQ(spec(Precision::fp8, ScaleMode::block_128x128).a_scale_count, 8 * 2);
  EXPECT_EQ(spec(Precision::fp8, ScaleMode::block_128x128).b_scale_count, 384 * 8);
  EXPECT_EQ(spec(Precision::fp8, ScaleMode::mx).a_scale_count, 256 * 32);
  EXPECT_EQ(spec(Precision::fp4, ScaleMode::nvfp4).b_scale_count, 384 * 64);
  // Tiles are whole: 130 rows and K = 48 in blocks of 16 take 256 x 4 scales.
  EXPECT_EQ(spec(Precision::fp4, ScaleMode::nvfp4, 130, 384, 48).a_scale_count, 256 * 4);
}

TEST(BlockScaledSpecs, ModesOutsideTheirDocumentedArchitecturesAreRefused) {
  EXPECT_NE(why(spec(Precision::fp8, ScaleMode::rowwise), 8, 9).find("9.0 only"),
            std::string::npos);
  EXPECT_NE(why(spec(Precision::fp8, ScaleMode::block_128x128), 10, 0).find("9.0 only"),
            std::string::npos);
  EXPECT_NE(why(spec(Precision::fp8, ScaleMode::mx), 9, 0).find("10.0 and newer"),
            std::string::npos);
  EXPECT_NE(why(spec(Precision::fp4, ScaleMode::nvfp4), 9, 0)
                .find("FP4 GEMMs need compute "
                      "capability 10.0"),
            std::string::npos);
}

TEST(BlockScaledSpecs, FormatsCublasLtLacksAreRefusedWithTheirReason) {
  EXPECT_NE(why(spec(Precision::fp4, ScaleMode::mx), 10, 0).find("no MXFP4"), std::string::npos);
  EXPECT_NE(why(spec(Precision::fp4, ScaleMode::tensor), 10, 0).find("no MXFP4"),
            std::string::npos);
  EXPECT_NE(why(spec(Precision::fp6, ScaleMode::mx), 10, 0).find("no FP6 GEMM"), std::string::npos);
  EXPECT_NE(why(spec(Precision::fp8, ScaleMode::nvfp4), 10, 0).find("CUDA_R_4F_E2M1 elements"),
            std::string::npos);
}

TEST(BlockScaledSpecs, WrongSizeOrMisalignedScaleTensorsAreRefused) {
  GemmSpec s = spec(Precision::fp8, ScaleMode::tile_1x128);
  s.a_scale_count -= 1;
  EXPECT_NE(why(s, 9, 0).find("A's scale tensor must hold 2048 scales"), std::string::npos);
  s = spec(Precision::fp8, ScaleMode::mx);
  s.b_scale = g_b_scales + 4;
  EXPECT_NE(why(s, 10, 0).find("B's scale tensor must start 16-byte aligned"), std::string::npos);
  s = spec(Precision::fp4, ScaleMode::nvfp4);
  s.a_scale = nullptr;
  EXPECT_NE(why(s, 10, 0).find("needs A's scale tensor"), std::string::npos);
  EXPECT_THROW(s.validate(10, 0), InvalidArgument);
}

TEST(BlockScaledSpecs, HopperModesWriteOnly16Or32BitOutputs) {
  GemmSpec s = spec(Precision::fp8, ScaleMode::rowwise);
  s.d_type = CUDA_R_8F_E4M3;
  EXPECT_NE(why(s, 9, 0).find("writes D as CUDA_R_16F, CUDA_R_16BF or CUDA_R_32F only"),
            std::string::npos);
}

TEST(BlockScaledSpecs, Fp4LayoutsAreTnAndSpan16Bytes) {
  GemmSpec s = spec(Precision::fp4, ScaleMode::nvfp4);
  s.problem.trans_a = false;
  EXPECT_NE(why(s, 10, 0).find("FP4 GEMMs require the TN layout"), std::string::npos);
  s = spec(Precision::fp4, ScaleMode::nvfp4, 256, 384, 1040);  // lda = 1040 FP4 = 520 bytes
  EXPECT_NE(why(s, 10, 0).find("16 bytes"), std::string::npos);
}

TEST(BlockScaledSpecs, ScaleModesAreForNarrowTypesOnly) {
  GemmSpec s = GemmSpec::for_precision(Precision::bf16, 256, 256, 256);
  s.scale_mode = ScaleMode::mx;
  EXPECT_NE(why(s, 10, 0).find("is for FP8 and FP4 GEMMs"), std::string::npos);
}

}  // namespace
}  // namespace tcbench
