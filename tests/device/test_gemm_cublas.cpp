// cuBLAS (cublasGemmEx, cublasGemmStridedBatchedEx) and cuBLASLt's batched layouts against the
// FP64 reference, with poisoned outputs: every precision cuBLAS runs at awkward sizes, and
// attention-shaped batches through both APIs, checked at their first and last matrix. A batch run
// with the wrong strides, or one matrix short, must fail that check. Skips without a GPU.
#include "gpu_test.hpp"

#include "tcbench/gemm_cublas.hpp"
#include "tcbench/gemm_lt.hpp"
#include "tcbench/gemm_types.hpp"
#include "tcbench/gemm_verify.hpp"
#include "tcbench/random_fill.hpp"

#include <gtest/gtest.h>

#include <cstddef>
#include <functional>
#include <string>

namespace tcbench {
namespace {

constexpr std::uint64_t kSeedA = 21, kSeedB = 22;

// Operands of a (batched) spec in its own storage types, filled as the harness fills them.
struct Operands {
  DeviceBuffer<std::byte> a, b, d;
};

std::size_t bytes(cudaDataType_t t, std::int64_t stride, std::int64_t one, std::int32_t batch) {
  return data_type_bytes(t) * static_cast<std::size_t>(stride * (batch - 1) + one);
}

Distribution inputs(cudaDataType_t t) {
  // Integer-valued INT8 inputs make the INT8 reference exact.
  return t == CUDA_R_8I ? Distribution::integers(-127, 127) : Distribution::uniform(-1, 1);
}

Operands make_operands(const GemmSpec& s, cudaStream_t stream) {
  GemmProblem p = s.problem;
  p.resolve();
  Operands o{
      DeviceBuffer<std::byte>(
          bytes(s.a_type, s.effective_stride_a(), p.lda * p.a_cols(), s.batch_count)),
      DeviceBuffer<std::byte>(
          bytes(s.b_type, s.effective_stride_b(), p.ldb * p.b_cols(), s.batch_count)),
      DeviceBuffer<std::byte>(bytes(s.d_type, s.effective_stride_d(), p.ldd * p.n, s.batch_count))};
  visit_data_type(s.a_type, [&]<typename T>(TypeTag<T>) {
    fill_random(reinterpret_cast<T*>(o.a.get()), o.a.bytes() / sizeof(T), inputs(s.a_type), kSeedA,
                stream);
    fill_random(reinterpret_cast<T*>(o.b.get()), o.b.bytes() / sizeof(T), inputs(s.b_type), kSeedB,
                stream);
  });
  return o;
}

// Verifies `run` as the GEMM `checked` describes (its batch and strides), on `ops`.
VerifyStats verify(const GemmSpec& checked, Precision p, const Operands& ops,
                   const std::function<void(cudaStream_t)>& run, cudaStream_t stream) {
  GemmOutputCheck c;
  c.problem = checked.problem;
  c.a_type = checked.a_type;
  c.b_type = checked.b_type;
  c.d_type = checked.d_type;
  c.a = ops.a.get();
  c.b = ops.b.get();
  c.d = ops.d.get();
  c.batch_count = checked.batch_count;
  c.stride_a = checked.effective_stride_a();
  c.stride_b = checked.effective_stride_b();
  c.stride_d = checked.effective_stride_d();
  return verify_gemm(c, run, error_model(p, checked.problem.k).element_tolerance(), stream);
}

struct BlasCase {
  Precision precision;
  std::int64_t m, n, k;
};
void PrintTo(const BlasCase& c, std::ostream* os) {
  *os << name(c.precision) << " " << c.m << "x" << c.n << "x" << c.k;
}

class DeviceCublas : public ::testing::TestWithParam<BlasCase> {};

TEST_P(DeviceCublas, GemmExMatchesReference) {
  TCB_REQUIRE_GPU(dev);
  const BlasCase c = GetParam();
  const GemmSpec spec = GemmSpec::for_precision(c.precision, c.m, c.n, c.k);
  if (auto why = why_cublas_invalid(spec, dev.spec.cc_major, dev.spec.cc_minor))
    GTEST_SKIP() << *why;
  Stream stream;
  const BlasHandle handle;
  const BlasGemm gemm(handle, spec, dev.spec.cc_major, dev.spec.cc_minor);
  const Operands ops = make_operands(spec, stream.get());
  const VerifyStats s = verify(
      spec, c.precision, ops,
      [&](cudaStream_t st) { gemm.run(st, ops.a.get(), ops.b.get(), nullptr, ops.d.get()); },
      stream.get());
  const double tol = tolerance(c.precision, c.k);
  EXPECT_TRUE(s.passes(tol)) << gemm.describe() << ": " << s.describe(tol);
}

INSTANTIATE_TEST_SUITE_P(
    AwkwardSizes, DeviceCublas,
    ::testing::Values(
        BlasCase{Precision::fp64, 257, 259, 263}, BlasCase{Precision::fp32, 257, 259, 263},
        BlasCase{Precision::tf32, 257, 259, 263}, BlasCase{Precision::fp16, 257, 259, 263},
        BlasCase{Precision::fp16_acc16, 257, 259, 263}, BlasCase{Precision::bf16, 257, 259, 263},
        // CUBLAS_COMPUTE_32I: lda = ldb = k (TN) a multiple of 4.
        BlasCase{Precision::int8, 257, 259, 264}),
    [](const ::testing::TestParamInfo<BlasCase>& param_info) {
      return std::string(name(param_info.param.precision));
    });

// 33 heads of S = Q K^T with head dimension 65 (B's leading dimension 130 bytes: unaligned).
GemmSpec heads(Precision p) {
  GemmSpec s = GemmSpec::for_precision(p, 128, 128, 65);
  s.batch_count = 33;
  return s;
}

TEST(DeviceBatched, CublasStridedBatchedMatchesReferenceAtFirstAndLastMatrix) {
  TCB_REQUIRE_GPU(dev);
  for (Precision p : {Precision::fp16, Precision::bf16, Precision::fp32}) {
    const GemmSpec spec = heads(p);
    if (auto why = why_cublas_invalid(spec, dev.spec.cc_major, dev.spec.cc_minor)) continue;
    Stream stream;
    const BlasHandle handle;
    const BlasGemm gemm(handle, spec, dev.spec.cc_major, dev.spec.cc_minor);
    EXPECT_EQ(gemm.function(), "cublasGemmStridedBatchedEx");
    const Operands ops = make_operands(spec, stream.get());
    const VerifyStats s = verify(
        spec, p, ops,
        [&](cudaStream_t st) { gemm.run(st, ops.a.get(), ops.b.get(), nullptr, ops.d.get()); },
        stream.get());
    const double tol = tolerance(p, spec.problem.k);
    EXPECT_TRUE(s.passes(tol)) << gemm.describe() << ": " << s.describe(tol);
    EXPECT_EQ(s.checked, 2u * 128u * 128u);  // two matrices, every row of each
  }
}

TEST(DeviceBatched, CublasLtBatchedLayoutsMatchReferenceAtFirstAndLastMatrix) {
  TCB_REQUIRE_GPU(dev);
  for (Precision p : {Precision::fp16, Precision::bf16, Precision::fp32}) {
    const GemmSpec spec = heads(p);
    if (auto why = spec.why_invalid(dev.spec.cc_major, dev.spec.cc_minor)) continue;
    Stream stream;
    const LtHandle lt;
    const GemmPlan plan(lt, spec, dev.spec.cc_major, dev.spec.cc_minor);
    const Operands ops = make_operands(spec, stream.get());
    const VerifyStats s = verify(
        spec, p, ops,
        [&](cudaStream_t st) { plan.run(st, ops.a.get(), ops.b.get(), ops.d.get(), ops.d.get()); },
        stream.get());
    const double tol = tolerance(p, spec.problem.k);
    EXPECT_TRUE(s.passes(tol)) << spec.describe() << ": " << s.describe(tol);
  }
}

// What the first-and-last check is for: a batch that reads the wrong matrices, or stops one
// short, fails it.
TEST(DeviceBatched, WrongStridesOrAMissingMatrixFailVerification) {
  TCB_REQUIRE_GPU(dev);
  const GemmSpec spec = heads(Precision::fp16);
  Stream stream;
  const BlasHandle handle;
  const Operands ops = make_operands(spec, stream.get());
  const double tol = tolerance(Precision::fp16, spec.problem.k);

  GemmSpec overlapping = spec;  // matrix i of A starts i elements in, not i matrices in
  overlapping.stride_a = 1;
  const BlasGemm wrong(handle, overlapping, dev.spec.cc_major, dev.spec.cc_minor);
  const VerifyStats w = verify(
      spec, Precision::fp16, ops,
      [&](cudaStream_t st) { wrong.run(st, ops.a.get(), ops.b.get(), nullptr, ops.d.get()); },
      stream.get());
  EXPECT_FALSE(w.passes(tol)) << w.describe(tol);

  GemmSpec short_by_one = spec;
  short_by_one.batch_count = 32;
  const BlasGemm shorter(handle, short_by_one, dev.spec.cc_major, dev.spec.cc_minor);
  const VerifyStats m = verify(
      spec, Precision::fp16, ops,
      [&](cudaStream_t st) { shorter.run(st, ops.a.get(), ops.b.get(), nullptr, ops.d.get()); },
      stream.get());
  EXPECT_FALSE(m.passes(tol)) << m.describe(tol);
  EXPECT_EQ(m.nonfinite, 128u * 128u);  // the last matrix is still the poison
}

TEST(DeviceBlasHandle, BindSetsTheStream) {
  TCB_REQUIRE_GPU(dev);
  Stream stream;
  const BlasHandle handle;
  EXPECT_EQ(handle.workspace_bytes(), kBlasWorkspaceBytes);
  handle.bind(stream.get(), CUBLAS_PEDANTIC_MATH);
  cudaStream_t bound = nullptr;
  TCB_CUBLAS(cublasGetStream(handle.get(), &bound));
  EXPECT_EQ(bound, stream.get());
  cublasMath_t mode = CUBLAS_DEFAULT_MATH;
  TCB_CUBLAS(cublasGetMathMode(handle.get(), &mode));
  EXPECT_EQ(mode, CUBLAS_PEDANTIC_MATH);
}

}  // namespace
}  // namespace tcbench
