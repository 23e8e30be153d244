// GemmSpec validation and cuBLASLt descriptor building, without a GPU: cublasLtMatmulDesc*,
// cublasLtMatrixLayout* and cublasLtMatmulPreference* Create/Set/Get work on the host alone
// (checked against cuBLASLt 13.1); only the handle, the heuristic and cublasLtMatmul need one.
#include "tcbench/gemm_lt.hpp"

#include <gtest/gtest.h>

#include <string>
#include <type_traits>

namespace tcbench {
namespace {

using P = Precision;

static_assert(!std::is_copy_constructible_v<LtHandle> &&
              std::is_nothrow_move_constructible_v<LtHandle>);
static_assert(!std::is_copy_constructible_v<MatmulDesc> &&
              std::is_nothrow_move_constructible_v<MatmulDesc>);
static_assert(!std::is_copy_constructible_v<MatrixLayout> &&
              std::is_nothrow_move_constructible_v<MatrixLayout>);
static_assert(!std::is_copy_constructible_v<MatmulPreference> &&
              std::is_nothrow_move_constructible_v<MatmulPreference>);
static_assert(!std::is_copy_constructible_v<GemmPlan> && std::is_move_constructible_v<GemmPlan>);
static_assert(std::is_nothrow_destructible_v<MatmulDesc>);

// Passes when the spec is valid; otherwise prints the sentence.
::testing::AssertionResult Valid(const GemmSpec& s, int ma, int mi) {
  if (auto why = s.why_invalid(ma, mi))
    return ::testing::AssertionFailure() << "on " << ma << "." << mi << ": " << *why;
  return ::testing::AssertionSuccess();
}

// Passes when the spec is rejected with a sentence containing every fragment.
::testing::AssertionResult Rejected(const GemmSpec& s, int ma, int mi,
                                    std::initializer_list<std::string_view> fragments) {
  const auto why = s.why_invalid(ma, mi);
  if (!why) return ::testing::AssertionFailure() << "accepted on " << ma << "." << mi;
  for (std::string_view f : fragments)
    if (why->find(f) == std::string::npos)
      return ::testing::AssertionFailure() << "sentence lacks '" << f << "': " << *why;
  if (why->back() != '.') return ::testing::AssertionFailure() << "not a sentence: " << *why;
  return ::testing::AssertionSuccess() << *why;
}

GemmSpec fp8(int64_t m = 256, int64_t n = 256, int64_t k = 256) {
  return GemmSpec::for_precision(P::fp8, m, n, k);
}
GemmSpec int8(int64_t m = 256, int64_t n = 256, int64_t k = 256) {
  return GemmSpec::for_precision(P::int8, m, n, k);
}

// ---------------------------------------------------------------------------------------------
// for_precision

TEST(GemmSpec, ForPrecisionIsValidWhereTheArchitectureHasIt) {
  for (P p : kAllPrecisions) {
    // FP4 runs block-scaled only and FP6 not at all: tests/host/test_block_scaled_specs.cpp.
    if (p == P::fp4 || p == P::fp6) continue;
    const GemmSpec s = GemmSpec::for_precision(p, 512, 256, 1024);
    EXPECT_TRUE(Valid(s, 9, 0)) << name(p);
    EXPECT_TRUE(Valid(s, 10, 0)) << name(p);
    EXPECT_TRUE(Valid(s, 12, 0)) << name(p);
    EXPECT_TRUE(Valid(s, 8, 9)) << name(p);
    EXPECT_EQ(Valid(s, 8, 0), p != P::fp8) << name(p);
    const bool turing_has = p != P::fp8 && p != P::bf16 && p != P::tf32;
    EXPECT_EQ(Valid(s, 7, 5), turing_has) << name(p);
  }
}

TEST(GemmSpec, ForPrecisionTypes) {
  const GemmSpec f32 = GemmSpec::for_precision(P::fp32, 64, 64, 64);
  EXPECT_EQ(f32.compute_type, CUBLAS_COMPUTE_32F_PEDANTIC);
  EXPECT_EQ(GemmSpec::for_precision(P::tf32, 64, 64, 64).compute_type,
            CUBLAS_COMPUTE_32F_FAST_TF32);
  const GemmSpec h = GemmSpec::for_precision(P::fp16_acc16, 64, 64, 64);
  EXPECT_EQ(h.compute_type, CUBLAS_COMPUTE_16F);
  EXPECT_EQ(h.scale_type, CUDA_R_16F);
  const GemmSpec i = int8();
  EXPECT_EQ(i.a_type, CUDA_R_8I);
  EXPECT_EQ(i.d_type, CUDA_R_32I);
  EXPECT_EQ(i.scale_type, CUDA_R_32I);
  EXPECT_TRUE(i.problem.trans_a);
  EXPECT_FALSE(i.problem.trans_b);
  const GemmSpec f8 = fp8();
  EXPECT_EQ(f8.a_type, CUDA_R_8F_E4M3);
  EXPECT_EQ(f8.b_type, CUDA_R_8F_E4M3);
  EXPECT_EQ(f8.d_type, CUDA_R_16BF);
  EXPECT_TRUE(f8.problem.trans_a);
  EXPECT_EQ(GemmSpec::for_precision(P::fp64, 8, 8, 8).scale_type, CUDA_R_64F);
}

TEST(GemmSpec, TightestLeadingDimensions) {
  GemmSpec s = fp8(64, 32, 128);  // TN: A stored k x m, B k x n
  EXPECT_EQ(s.problem.effective_lda(), 128);
  EXPECT_EQ(s.problem.effective_ldb(), 128);
  EXPECT_EQ(s.problem.effective_ldc(), 64);
  EXPECT_EQ(s.problem.effective_ldd(), 64);
  s.problem.trans_a = false;
  s.problem.trans_b = true;
  EXPECT_EQ(s.problem.effective_lda(), 64);
  EXPECT_EQ(s.problem.effective_ldb(), 32);
  s.problem.lda = 200;
  EXPECT_EQ(s.problem.effective_lda(), 200);
}

// ---------------------------------------------------------------------------------------------
// Rejections

TEST(GemmSpecReject, NonPositiveSizes) {
  EXPECT_TRUE(Rejected(GemmSpec::for_precision(P::fp16, 0, 64, 64), 9, 0, {"m=0", "positive"}));
  EXPECT_TRUE(Rejected(GemmSpec::for_precision(P::fp16, 64, -1, 64), 9, 0, {"n=-1"}));
  EXPECT_TRUE(Rejected(GemmSpec::for_precision(P::fp16, 64, 64, 0), 9, 0, {"k=0"}));
  GemmSpec b = GemmSpec::for_precision(P::fp16, 64, 64, 64);
  b.batch_count = 0;
  EXPECT_TRUE(Rejected(b, 9, 0, {"batch_count", "0"}));
  b.batch_count = 2;
  b.stride_b = -5;
  EXPECT_TRUE(Rejected(b, 9, 0, {"stride_b=-5"}));
  EXPECT_TRUE(
      Rejected(GemmSpec::for_precision(P::fp16, int64_t{1} << 32, 64, 64), 9, 0, {"int32"}));
}

TEST(GemmSpecReject, LeadingDimensionsTooSmall) {
  GemmSpec s = GemmSpec::for_precision(P::fp16, 128, 64, 32);  // NN
  s.problem.lda = 127;
  EXPECT_TRUE(Rejected(s, 9, 0, {"lda=127", "128 rows of A"}));
  s.problem.lda = 0;
  s.problem.ldb = 31;
  EXPECT_TRUE(Rejected(s, 9, 0, {"ldb=31", "32 rows of B"}));
  s.problem.ldb = 0;
  s.problem.ldc = 100;
  EXPECT_TRUE(Rejected(s, 9, 0, {"ldc=100", "128 rows of C"}));
  s.problem.ldc = 128;  // ldc = 0 means "as ldd" (C aliases D), so pin it to test ldd alone
  s.problem.ldd = 64;
  EXPECT_TRUE(Rejected(s, 9, 0, {"ldd=64"}));
  // Transposed A is stored k x m, so lda >= k is enough.
  GemmSpec t = GemmSpec::for_precision(P::fp16, 128, 64, 32);
  t.problem.trans_a = true;
  t.problem.lda = 32;
  EXPECT_TRUE(Valid(t, 9, 0));
  t.problem.lda = 31;
  EXPECT_TRUE(Rejected(t, 9, 0, {"lda=31", "A transposed"}));
}

TEST(GemmSpecReject, Fp8NeedsAda) {
  for (auto [ma, mi] : {std::pair{7, 5}, std::pair{8, 0}, std::pair{8, 6}, std::pair{8, 7}})
    EXPECT_TRUE(
        Rejected(fp8(), ma, mi, {"FP8", "8.9", std::to_string(ma) + "." + std::to_string(mi)}));
  EXPECT_TRUE(Valid(fp8(), 8, 9));
}

TEST(GemmSpecReject, Fp8LayoutTnExceptOnBlackwellDatacenter) {
  GemmSpec nn = fp8();
  nn.problem.trans_a = false;
  for (auto [ma, mi] : {std::pair{8, 9}, std::pair{9, 0}, std::pair{12, 0}, std::pair{12, 1}})
    EXPECT_TRUE(Rejected(nn, ma, mi, {"TN", "transa=N", "transb=N"}));
  EXPECT_TRUE(Valid(nn, 10, 0));
  EXPECT_TRUE(Valid(nn, 10, 3));
  GemmSpec nt = fp8();
  nt.problem.trans_a = false;
  nt.problem.trans_b = true;
  EXPECT_TRUE(Rejected(nt, 9, 0, {"transb=T"}));
  EXPECT_TRUE(Valid(nt, 10, 0));
}

TEST(GemmSpecReject, Fp8DimensionMultiples) {
  EXPECT_TRUE(Rejected(fp8(63, 64, 64), 9, 0, {"multiples of 16", "m=63"}));
  EXPECT_TRUE(Rejected(fp8(64, 64, 40), 9, 0, {"k=40"}));
  EXPECT_TRUE(Rejected(fp8(64, 12, 64), 9, 0, {"n=12", "multiple of 8"}));
  EXPECT_TRUE(Valid(fp8(64, 8, 64), 9, 0));
  EXPECT_TRUE(Valid(fp8(16, 24, 16), 9, 0));
  GemmSpec ld = fp8(64, 64, 64);
  ld.problem.lda = 72;  // 72 bytes of E4M3
  EXPECT_TRUE(Rejected(ld, 9, 0, {"lda", "72 bytes", "16"}));
  ld.problem.lda = 80;
  EXPECT_TRUE(Valid(ld, 9, 0));
  ld.problem.ldc = 68;  // 136 bytes of BF16
  EXPECT_TRUE(Rejected(ld, 9, 0, {"ldc", "136 bytes"}));
}

TEST(GemmSpecReject, Fp8TypeCombinations) {
  GemmSpec s = fp8();
  s.a_type = s.b_type = CUDA_R_8F_E5M2;
  EXPECT_TRUE(Rejected(s, 9, 0, {"E5M2 x E5M2"}));
  s.a_type = CUDA_R_8F_E4M3;
  EXPECT_TRUE(Valid(s, 9, 0));  // E4M3 x E5M2
  s.a_type = CUDA_R_8F_E5M2;
  s.b_type = CUDA_R_8F_E4M3;
  EXPECT_TRUE(Valid(s, 9, 0));  // E5M2 x E4M3
  s.d_type = CUDA_R_8F_E5M2;
  EXPECT_TRUE(Valid(s, 9, 0));  // E5M2 output is allowed when an input is E5M2

  GemmSpec e4 = fp8();
  e4.d_type = CUDA_R_8F_E4M3;
  EXPECT_TRUE(Valid(e4, 9, 0));
  e4.d_type = CUDA_R_8F_E5M2;
  EXPECT_TRUE(Rejected(e4, 9, 0, {"cannot write D as CUDA_R_8F_E5M2"}));
  e4.c_type = e4.d_type = CUDA_R_16F;
  EXPECT_TRUE(Valid(e4, 9, 0));
  e4.c_type = e4.d_type = CUDA_R_32F;
  EXPECT_TRUE(Valid(e4, 9, 0));
  e4.d_type = CUDA_R_16BF;
  EXPECT_TRUE(Rejected(e4, 9, 0, {"CUDA_R_32F"}));
  e4.c_type = e4.d_type = CUDA_R_8F_E4M3;
  EXPECT_TRUE(Rejected(e4, 9, 0, {"takes C"}));

  GemmSpec mixed = fp8();
  mixed.b_type = CUDA_R_16F;
  EXPECT_TRUE(Rejected(mixed, 9, 0, {"both A and B"}));
  GemmSpec compute = fp8();
  compute.compute_type = CUBLAS_COMPUTE_16F;
  EXPECT_TRUE(Rejected(compute, 9, 0, {"CUBLAS_COMPUTE_32F", "CUBLAS_COMPUTE_16F"}));
}

TEST(GemmSpecReject, Int8Rules) {
  EXPECT_TRUE(Valid(int8(), 7, 5));
  GemmSpec nn = int8();
  nn.problem.trans_a = false;
  EXPECT_TRUE(Rejected(nn, 9, 0, {"INT8", "TN", "transa=N"}));
  GemmSpec nt = int8();
  nt.problem.trans_b = true;
  EXPECT_TRUE(Rejected(nt, 10, 0, {"transb=T"}));  // unlike FP8, no Blackwell exception
  EXPECT_TRUE(Rejected(int8(6, 256, 256), 9, 0, {"multiples of 4", "m=6"}));
  EXPECT_TRUE(Rejected(int8(256, 256, 18), 9, 0, {"k=18"}));
  EXPECT_TRUE(Valid(int8(256, 7, 256), 9, 0));  // n is free
  GemmSpec ld = int8();
  ld.problem.lda = 258;
  EXPECT_TRUE(Rejected(ld, 9, 0, {"lda=258"}));
  ld.problem.lda = 0;
  ld.problem.ldb = 262;
  EXPECT_TRUE(Rejected(ld, 9, 0, {"ldb=262"}));
  ld.problem.ldb = 0;
  ld.problem.ldc = 258;
  EXPECT_TRUE(Rejected(ld, 9, 0, {"ldc=258"}));
  GemmSpec epi = int8();
  epi.epilogue = CUBLASLT_EPILOGUE_RELU;
  EXPECT_TRUE(Rejected(epi, 9, 0, {"default epilogue", "relu"}));
  // INT8 -> INT8 through a float alpha is a listed combination.
  GemmSpec requant = int8();
  requant.c_type = requant.d_type = CUDA_R_8I;
  requant.scale_type = CUDA_R_32F;
  EXPECT_TRUE(Valid(requant, 9, 0));
  requant.scale_type = CUDA_R_32I;
  EXPECT_TRUE(Rejected(requant, 9, 0, {"not a type combination"}));
}

TEST(GemmSpecReject, Bf16AndTf32NeedAmpere) {
  const GemmSpec bf = GemmSpec::for_precision(P::bf16, 64, 64, 64);
  EXPECT_TRUE(Rejected(bf, 7, 5, {"BF16", "8.0", "7.5"}));
  EXPECT_TRUE(Valid(bf, 8, 0));
  const GemmSpec tf = GemmSpec::for_precision(P::tf32, 64, 64, 64);
  EXPECT_TRUE(Rejected(tf, 7, 5, {"TF32", "7.5"}));
  EXPECT_TRUE(Valid(tf, 8, 6));
  GemmSpec fast16bf = GemmSpec::for_precision(P::fp32, 64, 64, 64);
  fast16bf.compute_type = CUBLAS_COMPUTE_32F_FAST_16BF;
  EXPECT_TRUE(Rejected(fast16bf, 7, 5, {"BF16"}));
}

TEST(GemmSpecReject, UnsupportedTypeCombinations) {
  GemmSpec s = GemmSpec::for_precision(P::fp16, 64, 64, 64);
  s.b_type = CUDA_R_16BF;
  EXPECT_TRUE(Rejected(s, 9, 0, {"CUDA_R_16F", "CUDA_R_16BF", "not a type combination"}));
  s = GemmSpec::for_precision(P::fp16, 64, 64, 64);
  s.compute_type = CUBLAS_COMPUTE_32I;
  EXPECT_TRUE(Rejected(s, 9, 0, {"CUBLAS_COMPUTE_32I"}));
  s = GemmSpec::for_precision(P::fp16_acc16, 64, 64, 64);
  s.scale_type = CUDA_R_32F;  // COMPUTE_16F takes a 16F scale
  EXPECT_TRUE(Rejected(s, 9, 0, {"not a type combination"}));
  s = GemmSpec::for_precision(P::fp16, 64, 64, 64);
  s.c_type = s.d_type = CUDA_R_32F;  // FP16 in, FP32 out
  EXPECT_TRUE(Valid(s, 9, 0));
  s = GemmSpec::for_precision(P::fp64, 64, 64, 64);
  s.compute_type = CUBLAS_COMPUTE_32F;
  EXPECT_TRUE(Rejected(s, 9, 0, {"CUDA_R_64F"}));
}

TEST(GemmSpecReject, Fp8OnlyOptionsOnOtherGemms) {
  GemmSpec s = GemmSpec::for_precision(P::bf16, 64, 64, 64);
  float dummy = 0;
  s.a_scale = &dummy;
  EXPECT_TRUE(Rejected(s, 9, 0, {"scale", "CUDA_R_16BF"}));
  s.a_scale = nullptr;
  s.amax_d = &dummy;
  EXPECT_TRUE(Rejected(s, 9, 0, {"amax_D"}));
  s.amax_d = nullptr;
  s.fast_accum = true;
  EXPECT_TRUE(Rejected(s, 9, 0, {"fast_accum"}));
  GemmSpec f = fp8();
  f.a_scale = f.b_scale = f.d_scale = &dummy;
  f.amax_d = &dummy;
  f.fast_accum = true;
  f.d_type = CUDA_R_8F_E4M3;
  EXPECT_TRUE(Valid(f, 9, 0));
}

TEST(GemmSpecReject, Epilogues) {
  GemmSpec s = GemmSpec::for_precision(P::fp16, 64, 64, 64);
  s.epilogue = CUBLASLT_EPILOGUE_RELU_BIAS;
  EXPECT_TRUE(Rejected(s, 9, 0, {"bias", "null"}));
  int dummy = 0;
  s.bias = &dummy;
  EXPECT_TRUE(Valid(s, 9, 0));
  s.epilogue = CUBLASLT_EPILOGUE_GELU_AUX;
  EXPECT_TRUE(Rejected(s, 9, 0, {"auxiliary"}));
}

TEST(GemmSpec, ValidateThrowsTheSentenceWithTheSpec) {
  const GemmSpec s = fp8(63, 64, 64);
  try {
    s.validate(9, 0);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("multiples of 16"), std::string::npos) << what;
    EXPECT_NE(what.find(s.describe()), std::string::npos) << what;
  }
  EXPECT_NO_THROW(fp8().validate(9, 0));
}

TEST(GemmSpec, DescribeNamesEverything) {
  GemmSpec s = fp8(64, 32, 128);
  s.problem.ldc = 80;
  s.fast_accum = true;
  const std::string d = s.describe();
  for (const char* f :
       {"m=64", "n=32", "k=128", "CUDA_R_8F_E4M3", "op T", "op N", "lda=128", "ldb=128", "ldc=80",
        "ldd=64", "CUDA_R_16BF", "CUBLAS_COMPUTE_32F", "scale CUDA_R_32F", "fast_accum"})
    EXPECT_NE(d.find(f), std::string::npos) << "'" << f << "' missing from: " << d;
  EXPECT_EQ(d.find('\n'), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Descriptors, read back through cuBLASLt's own getters

TEST(GemmDescriptors, MatmulDescFp8) {
  GemmSpec s = fp8();
  float a = 0, b = 0, d = 0, amax = 0;
  s.a_scale = &a;
  s.b_scale = &b;
  s.d_scale = &d;
  s.amax_d = &amax;
  s.fast_accum = true;
  const MatmulDesc desc = make_matmul_desc(s);
  EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_TRANSA), CUBLAS_OP_T);
  EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_TRANSB), CUBLAS_OP_N);
  EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE), CUBLAS_COMPUTE_32F);
  EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_SCALE_TYPE), CUDA_R_32F);
  EXPECT_EQ(desc.attribute<std::int8_t>(CUBLASLT_MATMUL_DESC_FAST_ACCUM), 1);
  EXPECT_EQ(desc.attribute<std::uint32_t>(CUBLASLT_MATMUL_DESC_EPILOGUE),
            CUBLASLT_EPILOGUE_DEFAULT);
  EXPECT_EQ(desc.attribute<const void*>(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER), &a);
  EXPECT_EQ(desc.attribute<const void*>(CUBLASLT_MATMUL_DESC_B_SCALE_POINTER), &b);
  EXPECT_EQ(desc.attribute<const void*>(CUBLASLT_MATMUL_DESC_D_SCALE_POINTER), &d);
  EXPECT_EQ(desc.attribute<void*>(CUBLASLT_MATMUL_DESC_AMAX_D_POINTER), &amax);

  s.fast_accum = false;
  EXPECT_EQ(make_matmul_desc(s).attribute<std::int8_t>(CUBLASLT_MATMUL_DESC_FAST_ACCUM), 0);
  // Unset pointers stay null (cuBLASLt's "scale of 1").
  EXPECT_EQ(make_matmul_desc(fp8()).attribute<const void*>(CUBLASLT_MATMUL_DESC_A_SCALE_POINTER),
            nullptr);
}

TEST(GemmDescriptors, MatmulDescPerPrecision) {
  struct Row {
    P p;
    cublasComputeType_t compute;
    cudaDataType_t scale;
    cublasOperation_t ta;
  };
  const Row rows[] = {{P::fp64, CUBLAS_COMPUTE_64F, CUDA_R_64F, CUBLAS_OP_N},
                      {P::fp32, CUBLAS_COMPUTE_32F_PEDANTIC, CUDA_R_32F, CUBLAS_OP_N},
                      {P::tf32, CUBLAS_COMPUTE_32F_FAST_TF32, CUDA_R_32F, CUBLAS_OP_N},
                      {P::fp16, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N},
                      {P::fp16_acc16, CUBLAS_COMPUTE_16F, CUDA_R_16F, CUBLAS_OP_N},
                      {P::bf16, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_N},
                      {P::int8, CUBLAS_COMPUTE_32I, CUDA_R_32I, CUBLAS_OP_T},
                      {P::fp8, CUBLAS_COMPUTE_32F, CUDA_R_32F, CUBLAS_OP_T}};
  for (const Row& r : rows) {
    const MatmulDesc desc = make_matmul_desc(GemmSpec::for_precision(r.p, 64, 64, 64));
    EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_COMPUTE_TYPE), r.compute)
        << name(r.p);
    EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_SCALE_TYPE), r.scale) << name(r.p);
    EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_TRANSA), r.ta) << name(r.p);
    EXPECT_EQ(desc.attribute<std::int32_t>(CUBLASLT_MATMUL_DESC_TRANSB), CUBLAS_OP_N) << name(r.p);
  }
}

TEST(GemmDescriptors, EpilogueAndBias) {
  GemmSpec s = GemmSpec::for_precision(P::fp16, 64, 64, 64);
  int bias = 0;
  s.epilogue = CUBLASLT_EPILOGUE_GELU_BIAS;
  s.bias = &bias;
  const MatmulDesc desc = make_matmul_desc(s);
  EXPECT_EQ(desc.attribute<std::uint32_t>(CUBLASLT_MATMUL_DESC_EPILOGUE),
            CUBLASLT_EPILOGUE_GELU_BIAS);
  EXPECT_EQ(desc.attribute<const void*>(CUBLASLT_MATMUL_DESC_BIAS_POINTER), &bias);
}

TEST(GemmDescriptors, AttributeSizeMismatchThrows) {
  const MatmulDesc desc = make_matmul_desc(fp8());
  EXPECT_THROW((void)desc.attribute<std::int64_t>(CUBLASLT_MATMUL_DESC_TRANSA), Error);
}

TEST(GemmDescriptors, LayoutsFp8Tn) {
  GemmSpec s = fp8(64, 32, 128);
  s.problem.ldc = 80;
  const GemmLayouts l = make_layouts(s);
  // A is stored k x m (transposed), B k x n, C and D m x n.
  EXPECT_EQ(l.a.attribute<std::uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE), CUDA_R_8F_E4M3);
  EXPECT_EQ(l.a.attribute<std::uint64_t>(CUBLASLT_MATRIX_LAYOUT_ROWS), 128u);
  EXPECT_EQ(l.a.attribute<std::uint64_t>(CUBLASLT_MATRIX_LAYOUT_COLS), 64u);
  EXPECT_EQ(l.a.attribute<std::int64_t>(CUBLASLT_MATRIX_LAYOUT_LD), 128);
  EXPECT_EQ(l.b.attribute<std::uint64_t>(CUBLASLT_MATRIX_LAYOUT_ROWS), 128u);
  EXPECT_EQ(l.b.attribute<std::uint64_t>(CUBLASLT_MATRIX_LAYOUT_COLS), 32u);
  EXPECT_EQ(l.c.attribute<std::uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE), CUDA_R_16BF);
  EXPECT_EQ(l.c.attribute<std::uint64_t>(CUBLASLT_MATRIX_LAYOUT_ROWS), 64u);
  EXPECT_EQ(l.c.attribute<std::uint64_t>(CUBLASLT_MATRIX_LAYOUT_COLS), 32u);
  EXPECT_EQ(l.c.attribute<std::int64_t>(CUBLASLT_MATRIX_LAYOUT_LD), 80);
  EXPECT_EQ(l.d.attribute<std::int64_t>(CUBLASLT_MATRIX_LAYOUT_LD), 64);
  EXPECT_EQ(l.d.attribute<std::int32_t>(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT), 1);
  EXPECT_EQ(l.d.attribute<std::int32_t>(CUBLASLT_MATRIX_LAYOUT_ORDER), CUBLASLT_ORDER_COL);
}

TEST(GemmDescriptors, LayoutsInt8AndBatch) {
  GemmSpec s = int8(64, 48, 96);
  s.batch_count = 3;
  s.stride_b = 10000;
  const GemmLayouts l = make_layouts(s);
  EXPECT_EQ(l.a.attribute<std::uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE), CUDA_R_8I);
  EXPECT_EQ(l.d.attribute<std::uint32_t>(CUBLASLT_MATRIX_LAYOUT_TYPE), CUDA_R_32I);
  EXPECT_EQ(l.a.attribute<std::int32_t>(CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT), 3);
  EXPECT_EQ(l.a.attribute<std::int64_t>(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET), 96 * 64);
  EXPECT_EQ(l.b.attribute<std::int64_t>(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET), 10000);
  EXPECT_EQ(l.c.attribute<std::int64_t>(CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET), 64 * 48);
}

TEST(GemmDescriptors, MakeLayoutRejectsNonsense) {
  EXPECT_THROW(make_layout(CUDA_R_16F, 0, 4, 4), InvalidArgument);
  EXPECT_THROW(make_layout(CUDA_R_16F, 8, 4, 7), InvalidArgument);
  EXPECT_NO_THROW(make_layout(CUDA_R_16F, 8, 4, 8));
}

TEST(GemmDescriptors, PreferenceWorkspace) {
  const MatmulPreference pref(std::size_t{4} << 20);
  EXPECT_EQ(pref.max_workspace_bytes(), std::size_t{4} << 20);
}

TEST(GemmDescriptors, OwnersMove) {
  MatmulDesc a = make_matmul_desc(fp8());
  ASSERT_TRUE(a);
  const cublasLtMatmulDesc_t raw = a.get();
  MatmulDesc b = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): the moved-from state is the point
  EXPECT_EQ(b.get(), raw);
  MatmulDesc c = make_matmul_desc(int8());
  c = std::move(b);  // destroys c's old descriptor without leaking or double-freeing
  EXPECT_EQ(c.get(), raw);
  MatrixLayout l1 = make_layout(CUDA_R_32F, 4, 4, 4);
  MatrixLayout l2 = std::move(l1);
  EXPECT_FALSE(l1);  // NOLINT(bugprone-use-after-move)
  EXPECT_TRUE(l2);
}

// ---------------------------------------------------------------------------------------------
// Numerical-impl flags

TEST(NumericalImpl, Decodes) {
  const NumericalImpl h = decode_numerical_impl(CUBLASLT_NUMERICAL_IMPL_FLAGS_HMMA |
                                                CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_16F |
                                                CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F);
  EXPECT_TRUE(h.uses_tensor_cores);
  EXPECT_EQ(h.impl_name, "HMMA fp16->fp32");

  const NumericalImpl f = decode_numerical_impl(CUBLASLT_NUMERICAL_IMPL_FLAGS_FMA |
                                                CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_32F |
                                                CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F);
  EXPECT_FALSE(f.uses_tensor_cores);
  EXPECT_EQ(f.impl_name, "FMA fp32->fp32");

  const NumericalImpl i = decode_numerical_impl(CUBLASLT_NUMERICAL_IMPL_FLAGS_IMMA |
                                                CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8I |
                                                CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32I);
  EXPECT_TRUE(i.uses_tensor_cores);
  EXPECT_EQ(i.impl_name, "IMMA int8->int32");

  const NumericalImpl d = decode_numerical_impl(CUBLASLT_NUMERICAL_IMPL_FLAGS_DMMA |
                                                CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_64F |
                                                CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_64F);
  EXPECT_TRUE(d.uses_tensor_cores);
  EXPECT_EQ(d.impl_name, "DMMA fp64->fp64");

  const NumericalImpl q = decode_numerical_impl(
      CUBLASLT_NUMERICAL_IMPL_FLAGS_HMMA | CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E4M3 |
      CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_8F_E5M2 | CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F);
  EXPECT_TRUE(q.uses_tensor_cores);
  EXPECT_EQ(q.impl_name, "QMMA e4m3+e5m2->fp32");

  const NumericalImpl tf = decode_numerical_impl(CUBLASLT_NUMERICAL_IMPL_FLAGS_HMMA |
                                                 CUBLASLT_NUMERICAL_IMPL_FLAGS_INPUT_TF32 |
                                                 CUBLASLT_NUMERICAL_IMPL_FLAGS_ACCUMULATOR_32F);
  EXPECT_EQ(tf.impl_name, "HMMA tf32->fp32");

  const NumericalImpl none = decode_numerical_impl(0);
  EXPECT_FALSE(none.uses_tensor_cores);
  EXPECT_EQ(none.impl_name, "unknown");
}

// ---------------------------------------------------------------------------------------------
// GemmPlan before any GPU call

TEST(GemmPlan, ValidatesBeforeTouchingCublasLt) {
  const LtHandle empty(nullptr);  // any cuBLASLt call with it would fail
  EXPECT_THROW(GemmPlan(empty, fp8(63, 64, 64), 9, 0), InvalidArgument);
  try {
    GemmPlan plan(empty, fp8(), 8, 0);
    FAIL() << "FP8 on 8.0 accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("8.9"), std::string::npos) << e.what();
  }
  // A valid spec gets as far as the handle check.
  try {
    GemmPlan plan(empty, fp8(), 9, 0);
    FAIL() << "empty handle accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("LtHandle"), std::string::npos) << e.what();
  }
}

TEST(LtHandle, CreationWithoutGpuIsAnError) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
    (void)cudaGetLastError();
    GTEST_SKIP() << "a GPU is present; this test covers the no-GPU failure path";
  }
  (void)cudaGetLastError();
  EXPECT_THROW(LtHandle{}, Error);
}

}  // namespace
}  // namespace tcbench
