// The cuBLAS wrapper without a GPU: the compute type and math mode each precision runs in, the
// rules a spec must meet for cublasGemmEx / cublasGemmStridedBatchedEx (each a sentence), the
// rules of one call, and that nothing reaches cuBLAS before they pass. The expected mappings are
// the ones issue 25 and the cuBLAS documentation state, written out here, not read back from the
// precision table.
#include "tcbench/gemm_cublas.hpp"

#include "tcbench/error.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>

namespace tcbench {
namespace {

using P = Precision;

static_assert(!std::is_copy_constructible_v<BlasHandle> &&
              std::is_nothrow_move_constructible_v<BlasHandle>);
static_assert(std::is_nothrow_destructible_v<BlasHandle>);

::testing::AssertionResult Accepted(const GemmSpec& s, int ma = 9, int mi = 0) {
  if (auto why = why_cublas_invalid(s, ma, mi))
    return ::testing::AssertionFailure() << "on " << ma << "." << mi << ": " << *why;
  return ::testing::AssertionSuccess();
}

// Refused with one sentence that holds every fragment.
::testing::AssertionResult Refused(const std::optional<std::string>& why,
                                   std::initializer_list<std::string_view> fragments) {
  if (!why) return ::testing::AssertionFailure() << "accepted";
  for (std::string_view f : fragments)
    if (why->find(f) == std::string::npos)
      return ::testing::AssertionFailure() << "sentence lacks '" << f << "': " << *why;
  if (why->back() != '.') return ::testing::AssertionFailure() << "not a sentence: " << *why;
  return ::testing::AssertionSuccess() << *why;
}
::testing::AssertionResult Refused(const GemmSpec& s,
                                   std::initializer_list<std::string_view> fragments, int ma = 9,
                                   int mi = 0) {
  return Refused(why_cublas_invalid(s, ma, mi), fragments);
}

GemmSpec spec(P p, std::int64_t m = 256, std::int64_t n = 128, std::int64_t k = 512) {
  return GemmSpec::for_precision(p, m, n, k);
}

// A device address for the call rules (never dereferenced: the rules are host arithmetic).
const void* address(std::uintptr_t v) {
  return reinterpret_cast<const void*>(v);
}

// ---------------------------------------------------------------------------------------------
// Compute type and math mode per precision

struct Expected {
  P p;
  cublasComputeType_t compute;
  cublasMath_t math;
  cudaDataType_t scale;
};

TEST(BlasMath, EveryPrecisionCublasRunsHasItsComputeTypeMathModeAndScaleType) {
  // Issue 25: CUBLAS_COMPUTE_32F_FAST_TF32 for TF32, _32F / _16F for FP16, _32I for INT8; the
  // FP32 baseline stays FFMA (pedantic); alpha and beta are what the compute type implies
  // (cuBLAS documentation, cublasGemmEx: 16F -> CUDA_R_16F, 32I -> CUDA_R_32I, 32F -> CUDA_R_32F).
  const Expected expected[] = {
      {P::fp64, CUBLAS_COMPUTE_64F, CUBLAS_DEFAULT_MATH, CUDA_R_64F},
      {P::fp32, CUBLAS_COMPUTE_32F_PEDANTIC, CUBLAS_PEDANTIC_MATH, CUDA_R_32F},
      {P::tf32, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_TF32_TENSOR_OP_MATH, CUDA_R_32F},
      {P::fp16, CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH, CUDA_R_32F},
      {P::fp16_acc16, CUBLAS_COMPUTE_16F, CUBLAS_DEFAULT_MATH, CUDA_R_16F},
      {P::bf16, CUBLAS_COMPUTE_32F, CUBLAS_DEFAULT_MATH, CUDA_R_32F},
      {P::int8, CUBLAS_COMPUTE_32I, CUBLAS_DEFAULT_MATH, CUDA_R_32I},
  };
  for (const Expected& e : expected) {
    const BlasMath m = blas_math(e.p);
    EXPECT_EQ(m.compute, e.compute) << name(e.p) << ": " << compute_type_name(m.compute);
    EXPECT_EQ(m.math_mode, e.math) << name(e.p) << ": " << math_mode_name(m.math_mode);
    EXPECT_EQ(m.scale, e.scale) << name(e.p) << ": " << data_type_name(m.scale);
    EXPECT_FALSE(cublas_unsupported(e.p)) << name(e.p);
    // The precision's own GEMM is one cublasGemmEx runs, on a GPU that has the precision.
    EXPECT_TRUE(Accepted(spec(e.p))) << name(e.p);
  }
}

TEST(BlasMath, PedanticComputeMeansPedanticMathWhateverTheType) {
  for (cublasComputeType_t c : {CUBLAS_COMPUTE_16F_PEDANTIC, CUBLAS_COMPUTE_32F_PEDANTIC,
                                CUBLAS_COMPUTE_64F_PEDANTIC, CUBLAS_COMPUTE_32I_PEDANTIC})
    EXPECT_EQ(blas_math(c, CUDA_R_32F).math_mode, CUBLAS_PEDANTIC_MATH) << compute_type_name(c);
  for (cublasComputeType_t c : {CUBLAS_COMPUTE_16F, CUBLAS_COMPUTE_32F, CUBLAS_COMPUTE_64F,
                                CUBLAS_COMPUTE_32I, CUBLAS_COMPUTE_32F_FAST_16F})
    EXPECT_EQ(blas_math(c, CUDA_R_32F).math_mode, CUBLAS_DEFAULT_MATH) << compute_type_name(c);
}

TEST(BlasMath, NarrowPrecisionsAreCuBlasLtOnlyAndSaySo) {
  for (P p : {P::fp8, P::fp4, P::fp6}) {
    EXPECT_TRUE(Refused(cublas_unsupported(p), {"cuBLASLt-only", std::string(name(p)).c_str()}))
        << name(p);
    EXPECT_TRUE(Refused(spec(p), {"cuBLASLt-only"})) << name(p);
  }
  EXPECT_TRUE(Refused(spec(P::fp8), {"FP8", "cublasGemmEx"}));
}

TEST(BlasMath, ModeNames) {
  EXPECT_EQ(math_mode_name(CUBLAS_PEDANTIC_MATH), "CUBLAS_PEDANTIC_MATH");
  EXPECT_EQ(math_mode_name(CUBLAS_TF32_TENSOR_OP_MATH), "CUBLAS_TF32_TENSOR_OP_MATH");
  EXPECT_EQ(math_mode_name(static_cast<cublasMath_t>(6)), "cublasMath_t(6)");
}

// ---------------------------------------------------------------------------------------------
// What cublasGemmEx takes

TEST(BlasValidation, ArchitectureRules) {
  EXPECT_TRUE(Refused(spec(P::bf16), {"BF16", "8.0", "7.5"}, 7, 5));
  EXPECT_TRUE(Refused(spec(P::tf32), {"TF32", "7.5"}, 7, 5));
  EXPECT_TRUE(Accepted(spec(P::fp16), 7, 5));
  EXPECT_TRUE(Accepted(spec(P::int8), 7, 5));
  EXPECT_TRUE(Accepted(spec(P::bf16), 8, 0));
}

TEST(BlasValidation, TypeTable) {
  GemmSpec s = spec(P::fp16);
  s.b_type = CUDA_R_32F;
  EXPECT_TRUE(Refused(s, {"CUDA_R_16F", "CUDA_R_32F", "not a combination cublasGemmEx supports"}));
  s = spec(P::fp16_acc16);
  s.scale_type = CUDA_R_32F;  // COMPUTE_16F takes half alpha/beta only
  EXPECT_TRUE(Refused(s, {"CUBLAS_COMPUTE_16F", "scale CUDA_R_32F"}));
  s = spec(P::fp16);
  s.compute_type = CUBLAS_COMPUTE_32F_FAST_TF32;  // the FAST types are for FP32 data
  EXPECT_TRUE(Refused(s, {"CUBLAS_COMPUTE_32F_FAST_TF32"}));
  // FP16 in, FP32 out (C = D = CUDA_R_32F) is in the table.
  s = spec(P::fp16);
  s.c_type = s.d_type = CUDA_R_32F;
  EXPECT_TRUE(Accepted(s));
  // INT8 in, FP32 out through COMPUTE_32F is too; INT8 into INT8 (cuBLASLt's requantizing path)
  // is not.
  s = spec(P::int8);
  s.c_type = s.d_type = CUDA_R_32F;
  s.compute_type = CUBLAS_COMPUTE_32F;
  s.scale_type = CUDA_R_32F;
  EXPECT_TRUE(Accepted(s));
  s.c_type = s.d_type = CUDA_R_8I;
  EXPECT_TRUE(Refused(s, {"CUDA_R_8I", "not a combination"}));
}

TEST(BlasValidation, CublasWritesDOverC) {
  GemmSpec s = spec(P::fp16);
  s.d_type = CUDA_R_32F;  // C stays FP16
  EXPECT_TRUE(Refused(s, {"C and D must have one type", "CUDA_R_16F", "CUDA_R_32F"}));
  s = spec(P::fp16);
  s.problem.ldc = 512;
  EXPECT_TRUE(Refused(s, {"ldc and ldd must be equal", "ldc=512", "ldd=256"}));
  s = spec(P::fp16);
  s.batch_count = 4;
  s.stride_c = 256 * 128 * 2;
  EXPECT_TRUE(Refused(s, {"batch strides must be equal"}));
}

TEST(BlasValidation, CublasLtFeaturesAreNamedAsSuch) {
  GemmSpec s = spec(P::fp16);
  s.epilogue = CUBLASLT_EPILOGUE_RELU;
  EXPECT_TRUE(Refused(s, {"Epilogues", "cuBLASLt"}));
  s = spec(P::fp16);
  float scale = 1.0f;
  s.d_scale = &scale;
  EXPECT_TRUE(Refused(s, {"cuBLASLt matmul attributes"}));
  s = spec(P::fp8);
  s.scale_mode = ScaleMode::mx;
  EXPECT_TRUE(Refused(s, {"cuBLASLt-only"}));
}

// cuBLAS documentation, cublasGemmEx: the CUBLAS_COMPUTE_32I path needs lda and ldb multiples of
// 4 (and A, B 32-bit aligned, alpha and beta 0 or 1: the call rules below).
TEST(BlasValidation, Int32ComputeRules) {
  GemmSpec s = spec(P::int8, 256, 128, 66);  // TN: lda = ldb = k = 66
  EXPECT_TRUE(Refused(s, {"CUBLAS_COMPUTE_32I", "multiples of 4", "lda=66", "ldb=66"}));
  s = spec(P::int8, 256, 33, 512);  // n = 33 enters no leading dimension in TN
  EXPECT_TRUE(Accepted(s));
  // cuBLASLt refuses INT8 outside TN; cublasGemmEx documents no layout rule, only the lds.
  s = spec(P::int8);
  s.problem.trans_a = false;  // NN: lda = m = 256, ldb = k = 512
  EXPECT_TRUE(Accepted(s));
  EXPECT_TRUE(s.why_invalid(9, 0).has_value());
  // A strided batch keeps every matrix 4-byte aligned only with strides that are multiples of 4.
  s = spec(P::int8);
  s.batch_count = 3;
  s.stride_a = 512 * 256 + 2;
  EXPECT_TRUE(Refused(s, {"4-byte aligned", "stride_a=131074"}));
  s.stride_a = 0;
  EXPECT_TRUE(Accepted(s));
}

TEST(BlasValidation, SharedShapeRulesNameTheLibrary) {
  GemmSpec s = spec(P::fp16, 0, 4, 4);
  EXPECT_TRUE(Refused(s, {"must be positive"}));
  s = spec(P::fp16, std::int64_t{1} << 32, 4, 4);
  EXPECT_TRUE(Refused(s, {"cuBLAS takes dimensions that fit in int32"}));
  EXPECT_TRUE(Refused(s.why_invalid(9, 0), {"cuBLASLt takes dimensions that fit in int32"}));
  s = spec(P::fp16);
  s.batch_count = 0;
  EXPECT_TRUE(Refused(s, {"batch_count must be at least 1"}));
}

// ---------------------------------------------------------------------------------------------
// Strided batches: the effective strides, the overlap rule (both libraries), the FLOPs

TEST(BlasBatch, EffectiveStridesArePackedMatricesUnlessGiven) {
  GemmSpec s = spec(P::fp16, 128, 64, 65);  // NN: A 128 x 65, B 65 x 64, D 128 x 64
  s.batch_count = 33;
  EXPECT_EQ(s.effective_stride_a(), 128 * 65);
  EXPECT_EQ(s.effective_stride_b(), 65 * 64);
  EXPECT_EQ(s.effective_stride_c(), 128 * 64);
  EXPECT_EQ(s.effective_stride_d(), 128 * 64);
  s.stride_b = 10000;
  EXPECT_EQ(s.effective_stride_b(), 10000);
  EXPECT_DOUBLE_EQ(s.flops(), 33.0 * 2 * 128 * 64 * 65);
  EXPECT_NE(s.describe().find("batch=33"), std::string::npos) << s.describe();
  EXPECT_NE(s.describe().find("B 10000"), std::string::npos) << s.describe();
}

TEST(BlasBatch, OverlappingOutputsAreRefusedByBothLibraries) {
  GemmSpec s = spec(P::fp16, 128, 128, 64);
  s.batch_count = 32;
  s.stride_d = s.stride_c = 128 * 127;  // one column short of a matrix
  EXPECT_TRUE(Refused(s, {"batch stride of C", "16256", "16384", "32 outputs would overlap"}));
  EXPECT_TRUE(Refused(s.why_invalid(9, 0), {"would overlap"}));
  // Inputs may repeat: a stride of one element for A is a user's choice, not an error.
  s.stride_d = s.stride_c = 0;
  s.stride_a = 1;
  EXPECT_TRUE(Accepted(s));
  // A single GEMM has no batch stride to check.
  GemmSpec one = spec(P::fp16, 128, 128, 64);
  one.stride_d = one.stride_c = 1;
  EXPECT_TRUE(Accepted(one));
}

// ---------------------------------------------------------------------------------------------
// One call

TEST(BlasCall, PointersAlphaAndBeta) {
  const GemmSpec h = spec(P::fp16);
  const void* a = address(0x10000);
  const void* b = address(0x20000);
  void* d = const_cast<void*>(address(0x30000));
  EXPECT_FALSE(why_cublas_call_invalid(h, a, b, nullptr, d, 1.0, 0.0));
  EXPECT_FALSE(why_cublas_call_invalid(h, a, b, d, d, 2.5, 1.0));  // float alpha: any value
  EXPECT_TRUE(Refused(why_cublas_call_invalid(h, nullptr, b, nullptr, d, 1, 0), {"A null"}));
  EXPECT_TRUE(Refused(why_cublas_call_invalid(h, a, b, nullptr, nullptr, 1, 0), {"D null"}));
  EXPECT_TRUE(
      Refused(why_cublas_call_invalid(h, a, b, address(0x40000), d, 1, 0), {"C must be D"}));

  const GemmSpec i = spec(P::int8);
  EXPECT_FALSE(why_cublas_call_invalid(i, a, b, nullptr, d, 1.0, 0.0));
  EXPECT_FALSE(why_cublas_call_invalid(i, a, b, nullptr, d, 0.0, 1.0));
  EXPECT_TRUE(Refused(why_cublas_call_invalid(i, a, b, nullptr, d, 2.0, 0.0),
                      {"alpha and beta of 0 or 1", "alpha=2"}));
  EXPECT_TRUE(Refused(why_cublas_call_invalid(i, a, b, nullptr, d, 1.0, 0.5), {"beta=0.5"}));
  EXPECT_TRUE(Refused(why_cublas_call_invalid(i, address(0x10002), b, nullptr, d, 1.0, 0.0),
                      {"4-byte aligned", "A starts at offset 2"}));
  EXPECT_TRUE(Refused(why_cublas_call_invalid(i, a, address(0x20001), nullptr, d, 1.0, 0.0),
                      {"B at offset 1"}));
}

TEST(BlasGemmTest, ValidatesAtConstructionAndNeverReachesCublasWithoutAHandle) {
  const BlasHandle empty(nullptr);  // any cuBLAS call with it would fail
  EXPECT_FALSE(empty);
  try {
    BlasGemm g(empty, spec(P::fp8), 9, 0);
    FAIL() << "FP8 accepted";
  } catch (const InvalidArgument& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cuBLASLt-only"), std::string::npos) << what;
    EXPECT_NE(what.find(spec(P::fp8).describe()), std::string::npos) << what;
  }
  const BlasGemm one(empty, spec(P::tf32), 9, 0);
  EXPECT_EQ(one.function(), "cublasGemmEx");
  EXPECT_EQ(one.label(), "cuBLAS GemmEx (CUBLAS_TF32_TENSOR_OP_MATH)");
  EXPECT_EQ(one.math().compute, CUBLAS_COMPUTE_32F_FAST_TF32);
  GemmSpec batch = spec(P::fp32, 128, 128, 64);
  batch.batch_count = 33;
  const BlasGemm many(empty, batch, 9, 0);
  EXPECT_EQ(many.function(), "cublasGemmStridedBatchedEx");
  EXPECT_EQ(many.label(), "cuBLAS GemmStridedBatchedEx (CUBLAS_PEDANTIC_MATH)");
  EXPECT_NE(many.describe().find("batch=33"), std::string::npos) << many.describe();

  void* d = const_cast<void*>(address(0x30000));
  // The call rules come first, then the handle; neither reaches cuBLAS.
  try {
    one.run(nullptr, nullptr, address(0x20000), nullptr, d);
    FAIL() << "null A accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("A null"), std::string::npos) << e.what();
  }
  try {
    one.run(nullptr, address(0x10000), address(0x20000), nullptr, d);
    FAIL() << "empty handle accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("live BlasHandle"), std::string::npos) << e.what();
  }
}

TEST(BlasHandleTest, CreationWithoutGpuIsAnError) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
    (void)cudaGetLastError();
    GTEST_SKIP() << "a GPU is present; this test covers the no-GPU failure path";
  }
  (void)cudaGetLastError();
  EXPECT_THROW(BlasHandle{}, Error);
}

}  // namespace
}  // namespace tcbench
