// Every cuBLASLt FP8 GEMM variant bench_fp8 runs, validated and turned into descriptors on the host
// (cublasLtMatmulDesc*/MatrixLayout* need no GPU), read back through cuBLASLt's getters; and the
// variants cuBLASLt refuses, rejected before it is called with a sentence naming the rule. Rules:
// cuBLAS docs, cublasLtMatmul (FP8 type table, "tensor- or block-scaled FP8 kernels":
// https://docs.nvidia.com/cuda/cublas/#cublasltmatmul).
#include "tcbench/gemm_lt.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace tcbench {
namespace {

struct Variant {
  cudaDataType_t a, b, d;
  bool d_scaled;  // FP8 output: D_SCALE and AMAX_D
};

const Variant kVariants[] = {
    {CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_16BF, false},
    {CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, CUDA_R_16BF, false},
    {CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, CUDA_R_16BF, false},
    {CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, true},
    {CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, CUDA_R_8F_E4M3, true},
    {CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, CUDA_R_8F_E5M2, true},
};

// Device pointers are only stored in descriptors, never dereferenced on the host.
float g_a_scale, g_b_scale, g_d_scale, g_amax;

GemmSpec spec_for(const Variant& v, bool fast_accum, std::int64_t m = 256, std::int64_t n = 128,
                  std::int64_t k = 512) {
  GemmSpec s = GemmSpec::for_precision(Precision::fp8, m, n, k);
  s.a_type = v.a;
  s.b_type = v.b;
  s.d_type = v.d;  // C stays BF16: the table allows FP8 D with a BF16 C
  s.a_scale = &g_a_scale;
  s.b_scale = &g_b_scale;
  if (v.d_scaled) {
    s.d_scale = &g_d_scale;
    s.amax_d = &g_amax;
  }
  s.fast_accum = fast_accum;
  return s;
}

std::string why(const GemmSpec& s, int ma, int mi) {
  return s.why_invalid(ma, mi).value_or("");
}

TEST(Fp8GemmSpecs, EveryVariantIsValidAndItsDescriptorsSayWhatWasAsked) {
  const std::pair<int, int> ccs[] = {{8, 9}, {9, 0}, {10, 0}, {12, 0}};
  for (const Variant& v : kVariants)
    for (bool fast : {false, true}) {
      const GemmSpec s = spec_for(v, fast);
      const std::string what = s.describe();
      for (auto [ma, mi] : ccs) EXPECT_EQ(why(s, ma, mi), "") << ma << "." << mi << " " << what;

      const MatmulDesc desc = make_matmul_desc(s);
      EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE),
                CUBLAS_COMPUTE_32F);
      EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_SCALE_TYPE), CUDA_R_32F);
      EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_TRANSA), CUBLAS_OP_T) << what;
      EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_TRANSB), CUBLAS_OP_N) << what;
      EXPECT_EQ(desc.attribute<std::int8_t>(CUBLASLT_MATMUL_DESC_FAST_ACCUM), fast ? 1 : 0);
      EXPECT_EQ(desc.attribute<const void*>(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER), &g_a_scale);
      EXPECT_EQ(desc.attribute<const void*>(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER), &g_b_scale);
      EXPECT_EQ(desc.attribute<const void*>(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER),
                v.d_scaled ? &g_d_scale : nullptr);
      EXPECT_EQ(desc.attribute<void*>(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER),
                v.d_scaled ? &g_amax : nullptr);

      // TN: A stored k x m, B k x n, both K-contiguous; C BF16 and D m x n.
      const GemmLayouts l = make_layouts(s);
      EXPECT_EQ(l.a.attribute<std::uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE), v.a);
      EXPECT_EQ(l.b.attribute<std::uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE), v.b);
      EXPECT_EQ(l.c.attribute<std::uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE), CUDA_R_16BF);
      EXPECT_EQ(l.d.attribute<std::uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE), v.d);
      EXPECT_EQ(l.a.attribute<std::uint64_t>(CUBLASLT_MATRIX_LAYOUT_ROWS), 512u);
      EXPECT_EQ(l.a.attribute<std::uint64_t>(CUBLASLT_MATRIX_LAYOUT_COLS), 256u);
      EXPECT_EQ(l.a.attribute<std::int64_t>(CUBLASLT_MATRIX_LAYOUT_LD), 512);
      EXPECT_EQ(l.b.attribute<std::uint64_t>(CUBLASLT_MATRIX_LAYOUT_ROWS), 512u);
      EXPECT_EQ(l.b.attribute<std::uint64_t>(CUBLASLT_MATRIX_LAYOUT_COLS), 128u);
      EXPECT_EQ(l.d.attribute<std::uint64_t>(CUBLASLT_MATRIX_LAYOUT_ROWS), 256u);
      EXPECT_EQ(l.d.attribute<std::int64_t>(CUBLASLT_MATRIX_LAYOUT_LD), 256);
    }
}

TEST(Fp8GemmSpecs, E5m2TimesE5m2IsRejected) {
  const GemmSpec s = spec_for({CUDA_R_8F_E5M2, CUDA_R_8F_E5M2, CUDA_R_16BF, false}, true);
  EXPECT_NE(why(s, 9, 0).find("E5M2 x E5M2 is not a supported FP8 GEMM"), std::string::npos);
  // E5M2 output needs an E5M2 input; with E4M3 x E4M3 it is not in the table.
  const GemmSpec e5_out = spec_for({CUDA_R_8F_E4M3, CUDA_R_8F_E4M3, CUDA_R_8F_E5M2, true}, true);
  EXPECT_NE(why(e5_out, 9, 0).find("cannot write D as CUDA_R_8F_E5M2"), std::string::npos);
}

TEST(Fp8GemmSpecs, DimensionsMustBeMultiplesOf16And8) {
  for (const Variant& v : kVariants) {
    EXPECT_NE(why(spec_for(v, true, 250, 128, 512), 9, 0).find("m=250"), std::string::npos);
    EXPECT_NE(why(spec_for(v, true, 256, 128, 520), 9, 0).find("k=520"), std::string::npos);
    EXPECT_NE(why(spec_for(v, true, 256, 132, 512), 9, 0).find("n a multiple of 8"),
              std::string::npos);
    EXPECT_EQ(why(spec_for(v, true, 272, 136, 528), 9, 0), "");
  }
}

TEST(Fp8GemmSpecs, LeadingDimensionsMustSpan16BytesAndCoverTheRows) {
  GemmSpec s = spec_for(kVariants[0], true);
  s.problem.lda = 520;  // 520 bytes of FP8
  EXPECT_NE(why(s, 9, 0).find("lda spans 520 bytes"), std::string::npos) << why(s, 9, 0);
  s.problem.lda = 528;
  EXPECT_EQ(why(s, 9, 0), "");
  s.problem.ldc = 256;
  s.problem.ldd = 260;  // 520 bytes of BF16
  EXPECT_NE(why(s, 9, 0).find("ldd spans 520 bytes"), std::string::npos) << why(s, 9, 0);
  s.problem.ldc = 0;  // C defaults to D's leading dimension: the same rule catches it first
  EXPECT_NE(why(s, 9, 0).find("ldc spans 520 bytes"), std::string::npos) << why(s, 9, 0);
  s.problem.ldd = 0;
  s.problem.ldb = 500;  // fewer than the 512 rows of B as stored
  EXPECT_NE(why(s, 9, 0).find("ldb=500"), std::string::npos) << why(s, 9, 0);
}

TEST(Fp8GemmSpecs, NonTnOnlyOnBlackwellDatacenter) {
  for (const Variant& v : kVariants) {
    GemmSpec nn = spec_for(v, true);
    nn.problem.trans_a = false;
    for (auto [ma, mi] : {std::pair{8, 9}, std::pair{9, 0}, std::pair{12, 0}})
      EXPECT_NE(why(nn, ma, mi).find("require the TN layout"), std::string::npos);
    EXPECT_EQ(why(nn, 10, 0), "");
  }
}

TEST(Fp8GemmSpecs, Fp8NeedsComputeCapability89) {
  for (const Variant& v : kVariants)
    for (auto [ma, mi] : {std::pair{7, 5}, std::pair{8, 0}, std::pair{8, 6}, std::pair{8, 7}}) {
      const std::string w = why(spec_for(v, false), ma, mi);
      EXPECT_NE(w.find("compute capability 8.9 or newer"), std::string::npos) << w;
      EXPECT_NE(w.find(std::to_string(ma) + "." + std::to_string(mi)), std::string::npos) << w;
      EXPECT_EQ(w.back(), '.');
    }
}

}  // namespace
}  // namespace tcbench
