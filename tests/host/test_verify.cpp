// Verification helpers on host data: the error norm, NaN/Inf detection, poison, tolerances.
#include "tcbench/cuda_owners.hpp"
#include "tcbench/gemm_verify.hpp"
#include "tcbench/random_fill.hpp"
#include "tcbench/reference_gemm.hpp"
#include "tcbench/verify.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace tcbench {
namespace {

TEST(Verify, RelativeFrobeniusErrorMatchesHandComputation) {
  const std::vector<double> ref = {3.0, 4.0};  // ||ref|| = 5
  const std::vector<double> got = {3.0, 4.5};  // ||diff|| = 0.5
  const VerifyStats s = compare_host(ref, got);
  EXPECT_DOUBLE_EQ(s.rel_error(), 0.1);
  EXPECT_EQ(s.checked, 2u);
  EXPECT_TRUE(s.passes(0.1));
  EXPECT_FALSE(s.passes(0.099));
}

TEST(Verify, IdenticalResultHasZeroError) {
  const std::vector<double> ref = {1.0, -2.0, 3.5};
  EXPECT_EQ(compare_host(ref, ref).rel_error(), 0.0);
}

TEST(Verify, NanOrInfNeverPasses) {
  const std::vector<double> ref = {1.0, 2.0, 3.0};
  for (double bad :
       {std::numeric_limits<double>::quiet_NaN(), std::numeric_limits<double>::infinity(),
        -std::numeric_limits<double>::infinity()}) {
    const std::vector<double> got = {1.0, bad, 3.0};
    const VerifyStats s = compare_host(ref, got);
    EXPECT_EQ(s.nonfinite, 1u);
    EXPECT_FALSE(s.passes(1e300)) << "a non-finite output passed with a huge tolerance";
    EXPECT_TRUE(std::isinf(s.rel_error()));
  }
}

// A batch is checked matrix by matrix and merged: the merge must be the check of both at once,
// so a matrix of a batch that is wrong cannot be averaged away by one that is right.
TEST(Verify, MergedMatricesAreOneCheckOverBoth) {
  const std::vector<double> ref0 = {1.0, -2.0, 3.0}, got0 = {1.0, -2.0, 3.0};
  const std::vector<double> ref1 = {4.0, 0.5, -1.0}, got1 = {4.0, 0.75, -1.5};
  const std::vector<double> abs0 = {1.0, 2.0, 3.0}, abs1 = {4.0, 0.5, 1.0};
  VerifyStats merged = compare_host(ref0, got0, abs0, 0.1);
  merged.merge(compare_host(ref1, got1, abs1, 0.1));
  std::vector<double> ref = ref0, got = got0, abs = abs0;
  ref.insert(ref.end(), ref1.begin(), ref1.end());
  got.insert(got.end(), got1.begin(), got1.end());
  abs.insert(abs.end(), abs1.begin(), abs1.end());
  const VerifyStats once = compare_host(ref, got, abs, 0.1);
  EXPECT_DOUBLE_EQ(merged.rel_error(), once.rel_error());
  EXPECT_EQ(merged.checked, 6u);
  EXPECT_EQ(merged.elem_violations, once.elem_violations);
  EXPECT_EQ(merged.elem_violations, 2u);  // 0.25 / 0.5 and 0.5 / 1.0 exceed 0.1
  EXPECT_DOUBLE_EQ(merged.max_elem_ratio, 0.5);
  // ||(0.25, 0.5)|| / ||(1, 2, 3, 4, 0.5, 1)||, by hand.
  EXPECT_DOUBLE_EQ(merged.rel_error(), std::sqrt(0.3125 / 31.25));
  // A non-finite element in either matrix fails the merge.
  VerifyStats bad = compare_host(ref0, got0);
  const std::vector<double> nan1 = {4.0, std::numeric_limits<double>::quiet_NaN(), -1.0};
  bad.merge(compare_host(ref1, nan1));
  EXPECT_FALSE(bad.passes(1e300));
}

TEST(Verify, BatchesCheckTheirFirstAndLastMatrix) {
  EXPECT_EQ(checked_matrices(1), std::vector<std::int32_t>{0});
  EXPECT_EQ(checked_matrices(2), (std::vector<std::int32_t>{0, 1}));
  EXPECT_EQ(checked_matrices(33), (std::vector<std::int32_t>{0, 32}));
}

TEST(Verify, NothingCheckedNeverPasses) {
  const VerifyStats s = compare_host({}, {});
  EXPECT_FALSE(s.passes(1.0));
}

TEST(Verify, MismatchedSizesAreRejected) {
  const std::vector<double> a = {1.0}, b = {1.0, 2.0};
  EXPECT_THROW(compare_host(a, b), InvalidArgument);
}

// The device poison is memset(0xFF); every float format reads that pattern as NaN, so an output
// the kernel never wrote fails verification. Check the pattern's meaning on the host.
TEST(Verify, PoisonPatternIsNanInEveryFloatFormat) {
  float f;
  std::memset(&f, 0xFF, sizeof f);
  EXPECT_TRUE(std::isnan(f));
  double d;
  std::memset(&d, 0xFF, sizeof d);
  EXPECT_TRUE(std::isnan(d));
  EXPECT_TRUE(std::isnan(__half2float(__ushort_as_half(0xFFFF))));
  __nv_bfloat16_raw bf_raw;
  bf_raw.x = 0xFFFF;
  EXPECT_TRUE(std::isnan(__bfloat162float(__nv_bfloat16(bf_raw))));
  __nv_fp8_e4m3 e4;
  std::memset(&e4, 0xFF, sizeof e4);
  EXPECT_TRUE(std::isnan(static_cast<float>(e4)));

  std::vector<float> poisoned(16);
  std::memset(poisoned.data(), 0xFF, poisoned.size() * sizeof(float));
  std::vector<double> got(poisoned.begin(), poisoned.end()), ref(16, 1.0);
  EXPECT_FALSE(compare_host(ref, got).passes(1.0));
}

TEST(Verify, ToleranceTableOrdersPrecisions) {
  const std::int64_t k = 4096;
  EXPECT_EQ(tolerance(Precision::int8, k), 0.0);  // integer accumulation is exact
  EXPECT_LT(tolerance(Precision::fp64, k), tolerance(Precision::fp32, k));
  EXPECT_LT(tolerance(Precision::fp32, k), tolerance(Precision::fp16, k));
  EXPECT_LT(tolerance(Precision::fp16, k), tolerance(Precision::bf16, k));
  EXPECT_LT(tolerance(Precision::fp16, k), tolerance(Precision::fp16_acc16, k));
  EXPECT_LT(tolerance(Precision::fp32, k), tolerance(Precision::tf32, k));
  // Deeper sums accumulate more rounding error.
  EXPECT_LT(tolerance(Precision::fp16_acc16, 256), tolerance(Precision::fp16_acc16, 16384));
  // Every floating tolerance rejects an error of order one (a wrong kernel).
  for (Precision p : kAllPrecisions) EXPECT_LT(tolerance(p, 16384), 0.5) << name(p);
  EXPECT_THROW(tolerance(Precision::fp32, 0), InvalidArgument);
}

// The tolerance is loose enough for a correct GEMM: FP16 inputs, FP32 accumulate, FP16 output
// (emulated on the host) passes; the same GEMM with one K element dropped does not.
TEST(Verify, ToleranceSeparatesCorrectFromWrongGemm) {
  GemmProblem p;
  p.m = 24;
  p.n = 20;
  p.k = 300;
  p.resolve();
  std::vector<__half> a(static_cast<std::size_t>(p.m * p.k)),
      b(static_cast<std::size_t>(p.k * p.n));
  for (std::size_t i = 0; i < a.size(); ++i)
    a[i] = __float2half_rn(std::sin(0.37f * static_cast<float>(i)));
  for (std::size_t i = 0; i < b.size(); ++i)
    b[i] = __float2half_rn(std::cos(0.11f * static_cast<float>(i)));
  const std::vector<double> ref = reference_gemm_host<__half, __half>(p, a, b);
  std::vector<double> good(ref.size()), wrong(ref.size());
  for (std::int64_t j = 0; j < p.n; ++j)
    for (std::int64_t i = 0; i < p.m; ++i) {
      float acc = 0.0f, acc_wrong = 0.0f;
      for (std::int64_t l = 0; l < p.k; ++l) {
        const float prod = __half2float(a[static_cast<std::size_t>(i + l * p.m)]) *
                           __half2float(b[static_cast<std::size_t>(l + j * p.k)]);
        acc += prod;
        if (l != 17) acc_wrong += prod;
      }
      const auto idx = static_cast<std::size_t>(i + j * p.m);
      good[idx] = __half2float(__float2half_rn(acc));
      wrong[idx] = __half2float(__float2half_rn(acc_wrong));
    }
  const double tol = tolerance(Precision::fp16, p.k);
  EXPECT_TRUE(compare_host(ref, good).passes(tol)) << compare_host(ref, good).describe(tol);
  EXPECT_FALSE(compare_host(ref, wrong).passes(tol)) << compare_host(ref, wrong).describe(tol);
}

// A GEMM of depth K simulated the way precision p rounds (inputs in the storage format, the
// accumulator of the error model, the output format), optionally without one 128-deep K tile.
struct Simulated {
  std::vector<double> ref, abs_ref, good, dropped;
};
Simulated simulate(Precision p, std::int64_t m, std::int64_t n, std::int64_t k) {
  const auto input = [p](double v) -> double {
    switch (p) {
      case Precision::fp16:
      case Precision::fp16_acc16:
        return __half2float(__float2half_rn(static_cast<float>(v)));
      case Precision::bf16:
        return __bfloat162float(__float2bfloat16_rn(static_cast<float>(v)));
      case Precision::int8:
        return std::round(v * 127.0);
      case Precision::fp8:
        return std::round(v * 8.0);
      case Precision::fp64:
        return v;
      default:
        return static_cast<float>(v);
    }
  };
  const auto tf32 = [](double v) {  // round to nearest, 10 mantissa bits kept
    float f = static_cast<float>(v);
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    bits = (bits + 0x1000u) & ~0x1FFFu;
    std::memcpy(&f, &bits, 4);
    return static_cast<double>(f);
  };
  const auto output = [p](double v) -> double {
    switch (p) {
      case Precision::fp16:
      case Precision::fp16_acc16:
        return __half2float(__float2half_rn(static_cast<float>(v)));
      case Precision::bf16:
      case Precision::fp8:
        return __bfloat162float(__float2bfloat16_rn(static_cast<float>(v)));
      case Precision::fp64:
      case Precision::int8:
        return v;
      default:
        return static_cast<float>(v);
    }
  };
  std::vector<double> a(static_cast<std::size_t>(m * k)), b(static_cast<std::size_t>(k * n));
  // The benchmarks' own input distribution (uniform in [-1, 1)), so the sums behave like theirs.
  const Distribution uniform = Distribution::uniform(-1.0f, 1.0f);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = input(random_value(uniform, 1, i));
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = input(random_value(uniform, 2, i));
  Simulated out;
  for (std::int64_t j = 0; j < n; ++j)
    for (std::int64_t i = 0; i < m; ++i) {
      double exact = 0, abs_sum = 0;
      double acc[2] = {0, 0};  // correct, dropped
      double block[2] = {0, 0};
      for (std::int64_t l = 0; l < k; ++l) {
        double x = a[static_cast<std::size_t>(i + l * m)],
               y = b[static_cast<std::size_t>(l + j * k)];
        exact += x * y;
        abs_sum += std::fabs(x * y);
        if (p == Precision::tf32) x = tf32(x), y = tf32(y);
        const double prod = x * y;
        const bool in_tile = l >= 4096 && l < 4096 + 128;
        for (int v = 0; v < 2; ++v) {
          const double term = (v == 1 && in_tile) ? 0.0 : prod;
          if (p == Precision::fp16_acc16) {
            block[v] += term;  // one HMMA k-step: 16 products, then one FP16 rounding
            if ((l + 1) % 16 == 0 || l + 1 == k) {
              acc[v] = __half2float(__float2half_rn(static_cast<float>(acc[v] + block[v])));
              block[v] = 0;
            }
          } else if (p == Precision::fp64 || p == Precision::int8) {
            acc[v] += term;
          } else {
            acc[v] = static_cast<float>(acc[v] + term);  // FP32 accumulator
          }
        }
      }
      out.ref.push_back(exact);
      out.abs_ref.push_back(abs_sum);
      out.good.push_back(output(acc[0]));
      out.dropped.push_back(output(acc[1]));
    }
  return out;
}

TEST(Verify, DroppedKTileFailsAtEveryPrecision) {
  // K = 16384 is the deepest GEMM tcbench runs; dropping one 128-deep tile there is the
  // smallest such error. FP16 accumulation's old tolerance (0.19) let it pass.
  const std::int64_t k = 16384;
  for (Precision p : kAllPrecisions) {
    const Simulated s = simulate(p, 6, 5, k);
    const ErrorModel e = error_model(p, k);
    const VerifyStats good = compare_host(s.ref, s.good, s.abs_ref, e.element_tolerance());
    const VerifyStats dropped = compare_host(s.ref, s.dropped, s.abs_ref, e.element_tolerance());
    const double tol = e.frobenius_tolerance();
    EXPECT_TRUE(good.passes(tol)) << name(p) << ": " << good.describe(tol);
    EXPECT_FALSE(dropped.passes(tol)) << name(p) << ": " << dropped.describe(tol);
  }
}

TEST(Verify, ALocalizedErrorCannotHideInTheAggregate) {
  // BF16 output: the Frobenius tolerance is ~1e-2, so one wrong element of 4096 passes the
  // aggregate; the per-element bound catches it.
  const std::int64_t k = 256;
  Simulated s = simulate(Precision::bf16, 64, 64, k);
  const ErrorModel e = error_model(Precision::bf16, k);
  s.good[1000] += 0.05 * s.abs_ref[1000];
  const VerifyStats aggregate_only = compare_host(s.ref, s.good);
  EXPECT_TRUE(aggregate_only.passes(e.frobenius_tolerance()))
      << aggregate_only.describe(e.frobenius_tolerance());
  const VerifyStats v = compare_host(s.ref, s.good, s.abs_ref, e.element_tolerance());
  EXPECT_EQ(v.elem_violations, 1u);
  EXPECT_FALSE(v.passes(e.frobenius_tolerance()));
}

TEST(Verify, SampleRowsCoversEdges) {
  EXPECT_EQ(sample_rows(5, 256), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  const auto rows = sample_rows(16384, 256);
  ASSERT_EQ(rows.size(), 256u);
  EXPECT_EQ(rows.front(), 0);
  EXPECT_EQ(rows.back(), 16383);
  for (std::size_t i = 1; i < rows.size(); ++i) EXPECT_GT(rows[i], rows[i - 1]);
  EXPECT_THROW(sample_rows(0, 4), InvalidArgument);
}

TEST(Verify, HostReferenceHandlesTransposes) {
  // A = [[1, 2], [3, 4]] (2x2), B = [[5], [6]] (2x1): A*B = [17, 39].
  GemmProblem nn;
  nn.m = 2;
  nn.n = 1;
  nn.k = 2;
  nn.resolve();
  const std::vector<float> a_col = {1, 3, 2, 4}, b = {5, 6};
  const std::vector<double> expected = {17, 39};
  EXPECT_EQ((reference_gemm_host<float, float>(nn, a_col, b)), expected);
  GemmProblem tn = nn;
  tn.trans_a = true;
  tn.lda = 0;
  tn.resolve();  // A stored k x m: the row-major bytes of A
  const std::vector<float> a_t = {1, 2, 3, 4};
  EXPECT_EQ((reference_gemm_host<float, float>(tn, a_t, b)), expected);
}

TEST(Buffers, SizesAreOverflowChecked) {
  EXPECT_EQ(checked_elements(3, 4), 12u);
  EXPECT_THROW(checked_elements(0, 4), InvalidArgument);
  EXPECT_THROW(checked_elements(-1, 4), InvalidArgument);
  EXPECT_THROW(checked_elements(std::int64_t{1} << 40, std::int64_t{1} << 40), InvalidArgument);
  EXPECT_THROW(checked_bytes<double>(std::numeric_limits<std::size_t>::max() / 4), InvalidArgument);
}

TEST(GemmProblemTest, ResolveFillsAndChecksLeadingDimensions) {
  GemmProblem p;
  p.m = 10;
  p.n = 20;
  p.k = 30;
  p.trans_a = true;
  p.resolve();
  EXPECT_EQ(p.lda, 30);
  EXPECT_EQ(p.ldb, 30);
  EXPECT_EQ(p.ldd, 10);
  EXPECT_DOUBLE_EQ(p.flops(), 2.0 * 10 * 20 * 30);
  GemmProblem bad = p;
  bad.lda = 29;
  EXPECT_THROW(bad.resolve(), InvalidArgument);
  GemmProblem zero;
  zero.m = 0;
  zero.n = 1;
  zero.k = 1;
  try {
    zero.resolve();
    FAIL() << "zero m accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("m=0"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tcbench
