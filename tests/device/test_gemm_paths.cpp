// Every GEMM path of the fp16_vs_fp32 topic (and cuBLASLt INT8/FP8 where the GPU has them) vs
// the FP64 reference, at awkward sizes, with poisoned outputs. Skips without a GPU.
#include "gpu_test.hpp"

#include "tcbench/gemm_lt.hpp"
#include "tcbench/gemm_verify.hpp"
#include "tcbench/kernels/gemm_simt.hpp"
#include "tcbench/kernels/gemm_wmma.hpp"
#include "tcbench/random_fill.hpp"

#include <gtest/gtest.h>

#include <array>

namespace tcbench {
namespace {

constexpr std::uint64_t kSeedA = 11, kSeedB = 12;

// elem_tol: the per-element bound (relative to sum |a||b|) of the precision under test.
template <typename In, typename Out>
VerifyStats check(const GemmProblem& p, Distribution dist,
                  const std::function<void(const In*, const In*, Out*, cudaStream_t)>& run,
                  double elem_tol) {
  Stream stream;
  DeviceBuffer<In> a(checked_elements(p.lda, p.a_cols())), b(checked_elements(p.ldb, p.b_cols()));
  DeviceBuffer<Out> d(checked_elements(p.ldd, p.n));
  fill_random(a.get(), a.size(), dist, kSeedA, stream.get());
  fill_random(b.get(), b.size(), dist, kSeedB, stream.get());
  return verify_gemm(
      p, a.get(), b.get(), d.get(), [&](cudaStream_t s) { run(a.get(), b.get(), d.get(), s); },
      elem_tol, stream.get());
}

GemmProblem awkward() {
  GemmProblem p;
  p.m = 257;
  p.n = 259;
  p.k = 263;
  return p.resolve();
}

TEST(DeviceGemm, SimtFp32MatchesReference) {
  TCB_REQUIRE_GPU(dev);
  // Edge shapes too: one element, k below and not a multiple of the kernel's 8-deep slice.
  for (const auto& [m, n, k] :
       {std::array<std::int64_t, 3>{257, 259, 263}, {1, 1, 1}, {129, 127, 13}, {300, 200, 7}}) {
    GemmProblem p;
    p.m = m;
    p.n = n;
    p.k = k;
    p.resolve();
    const VerifyStats s = check<float, float>(
        p, Distribution::uniform(-1, 1),
        [&](const float* a, const float* b, float* d, cudaStream_t st) {
          kernels::gemm_simt_fp32(p, a, b, d, st);
        },
        error_model(Precision::fp32, p.k).element_tolerance());
    EXPECT_TRUE(s.passes(tolerance(Precision::fp32, p.k)))
        << p.describe() << ": " << s.describe(tolerance(Precision::fp32, p.k));
  }
}

template <typename T>
void wmma_case(Precision prec) {
  TCB_REQUIRE_GPU(dev);
  const GemmProblem p = awkward();
  if (auto why = kernels::wmma_unsupported_reason(dev.spec.cc_major, dev.spec.cc_minor, prec, p))
    GTEST_SKIP() << *why;
  const VerifyStats s = check<T, T>(
      p, Distribution::uniform(-1, 1),
      [&](const T* a, const T* b, T* d, cudaStream_t st) { kernels::gemm_wmma<T>(p, a, b, d, st); },
      error_model(prec, p.k).element_tolerance());
  EXPECT_TRUE(s.passes(tolerance(prec, p.k))) << s.describe(tolerance(prec, p.k));
}
TEST(DeviceGemm, WmmaFp16MatchesReference) {
  wmma_case<__half>(Precision::fp16);
}
TEST(DeviceGemm, WmmaBf16MatchesReference) {
  wmma_case<__nv_bfloat16>(Precision::bf16);
}

// A kernel that writes nothing must fail verification: the poison is what makes this true.
TEST(DeviceGemm, UnwrittenOutputFailsVerification) {
  TCB_REQUIRE_GPU(dev);
  const GemmProblem p = awkward();
  const VerifyStats s = check<float, float>(
      p, Distribution::uniform(-1, 1), [](const float*, const float*, float*, cudaStream_t) {},
      1.0);
  EXPECT_FALSE(s.passes(1.0));
  EXPECT_EQ(s.nonfinite, s.checked);
}

TEST(DeviceFill, DeviceFillEqualsHostFill) {
  TCB_REQUIRE_GPU(dev);
  const std::size_t n = 100003;
  for (const Distribution& dist :
       {Distribution::uniform(-1, 1), Distribution::normal(0, 1),
        Distribution::activations_with_outliers(), Distribution::integers(-3, 3)}) {
    Stream stream;
    DeviceBuffer<float> d(n);
    fill_random(d.get(), n, dist, 42, stream.get());
    std::vector<float> host(n);
    fill_random_host<float>(host, dist, 42);
    const std::vector<float> got = d.download(stream.get());
    std::size_t mismatches = 0;
    // Box-Muller uses logf/cosf, whose device and host results may differ in the last ulp.
    for (std::size_t i = 0; i < n; ++i)
      if (std::fabs(got[i] - host[i]) > 1e-5f * std::fmax(1.0f, std::fabs(host[i]))) ++mismatches;
    EXPECT_EQ(mismatches, 0u) << "distribution kind " << static_cast<int>(dist.kind);
  }
}

struct LtCase {
  Precision precision;
  std::int64_t m, n, k;
};

void PrintTo(const LtCase& c, std::ostream* os) {
  *os << name(c.precision) << " " << c.m << "x" << c.n << "x" << c.k;
}

class DeviceCublasLt : public ::testing::TestWithParam<LtCase> {};

template <typename In, typename Out>
VerifyStats run_lt(const DeviceInfo& dev, Precision p, const GemmSpec& spec, Distribution dist) {
  LtHandle lt;
  GemmPlan plan(lt, spec, dev.spec.cc_major, dev.spec.cc_minor);
  GemmProblem problem = spec.problem;
  return check<In, Out>(
      problem.resolve(), dist,
      [&](const In* a, const In* b, Out* d, cudaStream_t s) { plan.run(s, a, b, d, d); },
      error_model(p, problem.k).element_tolerance());
}

TEST_P(DeviceCublasLt, MatchesReference) {
  TCB_REQUIRE_GPU(dev);
  const LtCase c = GetParam();
  // Support is the path's own rule (the spec validator), never the peak table.
  const GemmSpec spec = GemmSpec::for_precision(c.precision, c.m, c.n, c.k);
  if (auto why = spec.why_invalid(dev.spec.cc_major, dev.spec.cc_minor)) GTEST_SKIP() << *why;
  const auto uniform = Distribution::uniform(-1, 1);
  VerifyStats s;
  switch (c.precision) {
    case Precision::fp64:
      s = run_lt<double, double>(dev, c.precision, spec, uniform);
      break;
    case Precision::fp32:
    case Precision::tf32:
      s = run_lt<float, float>(dev, c.precision, spec, uniform);
      break;
    case Precision::fp16:
    case Precision::fp16_acc16:
      s = run_lt<__half, __half>(dev, c.precision, spec, uniform);
      break;
    case Precision::bf16:
      s = run_lt<__nv_bfloat16, __nv_bfloat16>(dev, c.precision, spec, uniform);
      break;
    // Integer-valued inputs make the INT8 and FP8 references exact.
    case Precision::int8:
      s = run_lt<std::int8_t, std::int32_t>(dev, c.precision, spec,
                                            Distribution::integers(-127, 127));
      break;
    case Precision::fp8:
      s = run_lt<__nv_fp8_e4m3, __nv_bfloat16>(dev, c.precision, spec,
                                               Distribution::integers(-8, 8));
      break;
    case Precision::fp4:  // block-scaled only: why_invalid refuses them above; bench_block_scaling
    case Precision::fp6:
      GTEST_SKIP() << name(c.precision) << " runs block-scaled only (bench_block_scaling)";
  }
  const double tol = tolerance(c.precision, c.k);
  EXPECT_TRUE(s.passes(tol)) << spec.describe() << ": " << s.describe(tol);
}

INSTANTIATE_TEST_SUITE_P(
    AwkwardSizes, DeviceCublasLt,
    ::testing::Values(
        LtCase{Precision::fp64, 257, 259, 263}, LtCase{Precision::fp32, 257, 259, 263},
        LtCase{Precision::tf32, 257, 259, 263}, LtCase{Precision::fp16, 257, 259, 263},
        LtCase{Precision::fp16_acc16, 257, 259, 263}, LtCase{Precision::bf16, 257, 259, 263},
        // INT8 needs m, k multiples of 4; FP8 m, k multiples of 16 and n of 8.
        LtCase{Precision::int8, 260, 259, 264}, LtCase{Precision::fp8, 272, 264, 256}),
    [](const ::testing::TestParamInfo<LtCase>& param_info) {
      return std::string(name(param_info.param.precision));
    });

}  // namespace
}  // namespace tcbench
