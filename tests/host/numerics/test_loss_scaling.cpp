// Loss scaling. The dynamic scaler must reproduce PyTorch GradScaler step for step: defaults
// init 2^16, growth x2 after 2000 consecutive clean steps, backoff x0.5 on any Inf/NaN with the
// step skipped and the clean-step counter reset, and a growth that would overflow to Inf is
// dropped (pytorch/pytorch aten/src/ATen/native/cuda/AmpKernels.cu, amp_update_scale_cuda_kernel;
// torch/amp/grad_scaler.py). Expected sequences below are written out from that rule.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "tcbench/numerics/loss_scaling.hpp"

namespace tn = tcbench::numerics;

namespace {

// Runs a script of 'C' (clean) and 'I' (Inf/NaN found) steps.
std::vector<tn::ScalerStep> run(tn::DynamicLossScaler& s, std::string_view script) {
  std::vector<tn::ScalerStep> out;
  for (char c : script) out.push_back(s.update(c == 'I'));
  return out;
}

TEST(DynamicLossScaler, PyTorchDefaults) {
  tn::DynamicLossScaler s;
  EXPECT_EQ(s.scale(), 65536.0f);
  EXPECT_EQ(s.config().growth_factor, 2.0);
  EXPECT_EQ(s.config().backoff_factor, 0.5);
  EXPECT_EQ(s.config().growth_interval, 2000);
  EXPECT_EQ(s.inv_scale(), 1.0f / 65536.0f);
}

TEST(DynamicLossScaler, GrowsAfterExactly2000CleanSteps) {
  tn::DynamicLossScaler s;
  for (int i = 1; i <= 1999; ++i) {
    const tn::ScalerStep st = s.update(false);
    ASSERT_FALSE(st.skipped);
    ASSERT_EQ(st.scale_after, 65536.0f) << "step " << i;
    ASSERT_EQ(s.growth_tracker(), i);
  }
  const tn::ScalerStep st = s.update(false);  // the 2000th clean step
  EXPECT_EQ(st.scale_used, 65536.0f);
  EXPECT_EQ(st.scale_after, 131072.0f);
  EXPECT_EQ(s.growth_tracker(), 0);
  for (int i = 0; i < 1999; ++i) s.update(false);
  EXPECT_EQ(s.scale(), 131072.0f);
  s.update(false);
  EXPECT_EQ(s.scale(), 262144.0f);
  EXPECT_EQ(s.history().size(), 4000u);
}

TEST(DynamicLossScaler, InfBacksOffSkipsAndResetsTheCounter) {
  tn::DynamicLossScaler s;
  for (int i = 0; i < 1500; ++i) s.update(false);
  ASSERT_EQ(s.growth_tracker(), 1500);
  const tn::ScalerStep bad = s.update(true);
  EXPECT_TRUE(bad.found_inf);
  EXPECT_TRUE(bad.skipped);
  EXPECT_EQ(bad.scale_used, 65536.0f);
  EXPECT_EQ(bad.scale_after, 32768.0f);
  EXPECT_EQ(s.growth_tracker(), 0);
  // The 500 clean steps before the overflow no longer count: growth needs 2000 new ones.
  for (int i = 0; i < 1999; ++i) ASSERT_EQ(s.update(false).scale_after, 32768.0f);
  EXPECT_EQ(s.update(false).scale_after, 65536.0f);
}

TEST(DynamicLossScaler, ConsecutiveInfsHalveEachTime) {
  tn::DynamicLossScaler s;
  const auto steps = run(s, "IIII");
  const float want[] = {32768.0f, 16384.0f, 8192.0f, 4096.0f};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(steps[i].scale_after, want[i]);
    EXPECT_TRUE(steps[i].skipped);
  }
}

TEST(DynamicLossScaler, ScriptedSequenceWithCustomFactors) {
  tn::DynamicLossScaler s(
      {.init_scale = 1.0f, .growth_factor = 4.0, .backoff_factor = 0.25, .growth_interval = 3});
  //                 C     C     I     C     C     C     C     I     C     C     C
  const auto steps = run(s, "CCICCCCICCC");
  const float after[] = {1, 1, 0.25f, 0.25f, 0.25f, 1, 1, 0.25f, 0.25f, 0.25f, 1};
  const bool skipped[] = {false, false, true,  false, false, false,
                          false, true,  false, false, false};
  ASSERT_EQ(steps.size(), 11u);
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].scale_after, after[i]) << "step " << i;
    EXPECT_EQ(steps[i].skipped, skipped[i]) << "step " << i;
    EXPECT_EQ(steps[i].scale_used, i == 0 ? 1.0f : after[i - 1]) << "step " << i;
  }
  EXPECT_EQ(s.history().size(), steps.size());
}

TEST(DynamicLossScaler, NeverGrowsToInf) {
  tn::DynamicLossScaler s({.init_scale = 0x1p127f, .growth_interval = 1});
  const tn::ScalerStep st = s.update(false);
  EXPECT_EQ(st.scale_after, 0x1p127f);  // 2^128 is Inf in FP32: growth dropped
  EXPECT_EQ(s.growth_tracker(), 0);     // ...but the tracker still resets
  EXPECT_EQ(s.update(true).scale_after, 0x1p126f);
  EXPECT_EQ(s.update(false).scale_after, 0x1p127f);
}

TEST(DynamicLossScaler, RejectsInvalidConfigs) {
  using C = tn::GradScalerConfig;
  EXPECT_THROW(tn::DynamicLossScaler(C{.init_scale = 0.0f}), std::invalid_argument);
  EXPECT_THROW(tn::DynamicLossScaler(C{.init_scale = INFINITY}), std::invalid_argument);
  EXPECT_THROW(tn::DynamicLossScaler(C{.growth_factor = 1.0}), std::invalid_argument);
  EXPECT_THROW(tn::DynamicLossScaler(C{.backoff_factor = 1.0}), std::invalid_argument);
  EXPECT_THROW(tn::DynamicLossScaler(C{.backoff_factor = 0.0}), std::invalid_argument);
  EXPECT_THROW(tn::DynamicLossScaler(C{.growth_interval = 0}), std::invalid_argument);
}

TEST(StaticLossScaler, FixedScaleSkipsOverflowingSteps) {
  tn::StaticLossScaler s(128.0f);  // a constant S, e.g. the 128 of the bigLSTM run (ICLR 2018)
  EXPECT_EQ(s.inv_scale(), 1.0f / 128.0f);
  const tn::ScalerStep ok = s.update(false), bad = s.update(true);
  EXPECT_FALSE(ok.skipped);
  EXPECT_TRUE(bad.skipped);
  EXPECT_EQ(bad.scale_after, 128.0f);
  EXPECT_THROW(tn::StaticLossScaler(-1.0f), std::invalid_argument);
}

TEST(CheckAndUnscale, UnscalesAndFlagsNonFinite) {
  bool found = false;
  EXPECT_EQ(tn::check_and_unscale(32768.0f, 1.0f / 65536.0f, found), 0.5f);
  EXPECT_FALSE(found);
  EXPECT_EQ(tn::check_and_unscale(-3.0f, 0.25f, found), -0.75f);
  EXPECT_FALSE(found);
  EXPECT_TRUE(std::isinf(tn::check_and_unscale(INFINITY, 0.5f, found)));
  EXPECT_TRUE(found);
  EXPECT_EQ(tn::check_and_unscale(2.0f, 0.5f, found), 1.0f);
  EXPECT_TRUE(found);  // sticky: a later finite gradient never clears it
  bool found_nan = false;
  tn::check_and_unscale(NAN, 1.0f, found_nan);
  EXPECT_TRUE(found_nan);
  // FP16 gradients: a value only representable after unscaling comes back exact in FP16.
  bool f16 = false;
  EXPECT_EQ(__half2float(tn::check_and_unscale(__float2half_rn(60000.0f), 1.0f / 1024, f16)),
            58.59375f);
  EXPECT_FALSE(f16);
  tn::check_and_unscale(__float2half_rn(1e6f), 1.0f, f16);  // 1e6 is Inf in FP16
  EXPECT_TRUE(f16);
}

TEST(InverseScale, IsTheDoubleReciprocalRoundedToFloat) {
  for (float s : {65536.0f, 3.0f, 1e-30f, 0x1p127f, 12345.678f})
    EXPECT_EQ(tn::inverse_scale(s), static_cast<float>(1.0 / static_cast<double>(s))) << s;
}

TEST(GradientRange, ClassesAtScaleOneAndAfterScaling) {
  // FP16 thresholds (IEEE binary16): subnormal below 2^-14 ~ 6.1e-5, zero at or below 2^-25
  // ~ 3e-8, Inf from 65520. BF16 has FP32's exponent range, so none of these fall out of it.
  const std::vector<float> g{0.0f, 1e-8f, 1e-6f, 1e-3f, 1.0f, 1e5f, NAN, 1e30f};
  const auto r1 = tn::analyze_gradient_range(g, 1.0f);
  const double e = 1.0 / 8;
  EXPECT_EQ(r1.count, 8u);
  EXPECT_DOUBLE_EQ(r1.fp16.zero, e);
  EXPECT_DOUBLE_EQ(r1.fp16.flushed_to_zero, e);  // 1e-8
  EXPECT_DOUBLE_EQ(r1.fp16.subnormal, e);        // 1e-6
  EXPECT_DOUBLE_EQ(r1.fp16.normal, 2 * e);       // 1e-3, 1
  EXPECT_DOUBLE_EQ(r1.fp16.overflow, 2 * e);     // 1e5, 1e30
  EXPECT_DOUBLE_EQ(r1.fp16.not_finite, e);       // NaN
  EXPECT_DOUBLE_EQ(r1.bf16.normal, 6 * e);       // every nonzero finite value
  EXPECT_DOUBLE_EQ(r1.bf16.flushed_to_zero, 0.0);
  EXPECT_DOUBLE_EQ(r1.bf16.overflow, 0.0);
  // x1024 lifts 1e-8 to 1.02e-5 (subnormal) and 1e-6 to 1.02e-3 (normal); 1e30 * 2^10 is
  // still inside BF16's range (max 3.39e38).
  const auto r2 = tn::analyze_gradient_range(g, 1024.0f);
  EXPECT_DOUBLE_EQ(r2.fp16.flushed_to_zero, 0.0);
  EXPECT_DOUBLE_EQ(r2.fp16.subnormal, e);
  EXPECT_DOUBLE_EQ(r2.fp16.normal, 3 * e);
  EXPECT_DOUBLE_EQ(r2.bf16.normal, 6 * e);
  // A scale that pushes a finite gradient past FP32 itself still counts as overflow.
  const auto r3 = tn::analyze_gradient_range(g, 0x1p40f);
  EXPECT_DOUBLE_EQ(r3.bf16.overflow, e);
  EXPECT_DOUBLE_EQ(r3.fp16.not_finite, e);
}

// Gradients spread evenly over binary exponents [-40, 0): the FP16 fraction lost to underflow
// is the share of exponents below the flush point (about 2^-25), and a scale of 2^k moves
// that point down by k exponents [derived]. Micikevicius et al. (ICLR 2018) found 2^3 enough
// for SSD and 2^15 to recover nearly all lost values; this is the same arithmetic.
TEST(GradientRange, ScalingShiftsTheUnderflowFraction) {
  std::mt19937 rng(17);
  std::uniform_real_distribution<float> u(-40.0f, 0.0f);
  std::vector<float> g(400000);
  for (float& x : g) x = std::exp2(u(rng));
  const auto r0 = tn::analyze_gradient_range(g, 1.0f);
  EXPECT_NEAR(r0.fp16.flushed_to_zero, 15.0 / 40, 0.01);
  // (2^-25, 2^-24) rounds up to 2^-24, so subnormal spans exponents (-25, -14).
  EXPECT_NEAR(r0.fp16.subnormal, 11.0 / 40, 0.01);
  EXPECT_DOUBLE_EQ(r0.bf16.flushed_to_zero, 0.0);
  const auto r8 = tn::analyze_gradient_range(g, 8.0f);
  EXPECT_NEAR(r8.fp16.flushed_to_zero, 12.0 / 40, 0.01);
  const auto r15 = tn::analyze_gradient_range(g, 32768.0f);
  EXPECT_NEAR(r15.fp16.flushed_to_zero, 0.0, 0.01);
  EXPECT_DOUBLE_EQ(r15.fp16.overflow, 0.0);  // max 2^0 * 2^15 < 65504
  const auto r17 = tn::analyze_gradient_range(g, 131072.0f);
  EXPECT_NEAR(r17.fp16.overflow, 1.0 / 40, 0.005);  // exponents [-1, 0) now reach 2^16
}

// Landing counts against an independent reference: FP16's thresholds from IEEE 754 binary16
// under round-to-nearest-even, not CUDA's conversion (which count_landings uses). Scaled
// magnitudes at or below 2^-25 round to 0 (the tie goes to even); below 2^-14 - 2^-25 they stay
// subnormal (from there they round up to 2^-14); from 65520 (65504 + half an ulp, a tie that
// goes to the even neighbour 2^16) they overflow.
tn::Landing fp16_landing_by_threshold(float g, float scale) {
  // The FP32 product, as the chain rule forms it; exact in double.
  const double s = std::fabs(static_cast<double>(g * scale));
  if (s == 0.0) return tn::Landing::zero;
  if (s <= 0x1p-25) return tn::Landing::flushed_to_zero;
  if (s < 0x1p-14 - 0x1p-25) return tn::Landing::subnormal;
  if (s >= 65520.0) return tn::Landing::overflow;
  return tn::Landing::normal;
}

TEST(GradientLanding, LognormalCountsMatchIeeeThresholdsAtEverySweepScale) {
  const std::vector<float> g = tn::lognormal_gradients(200000, 7);
  for (int e : tn::kSweepScaleLog2) {
    const float scale = std::ldexp(1.0f, e);
    tn::LandingCounts want{};
    for (float x : g) ++want[static_cast<std::size_t>(fp16_landing_by_threshold(x, scale))];
    EXPECT_EQ(tn::count_landings(g, scale, tn::Format::fp16), want) << "scale 2^" << e;
    // BF16 has FP32's exponent range: every one of these gradients is normal at every scale.
    const tn::LandingCounts bf = tn::count_landings(g, scale, tn::Format::bf16);
    EXPECT_EQ(bf[static_cast<std::size_t>(tn::Landing::normal)], g.size()) << "scale 2^" << e;
  }
}

TEST(GradientLanding, LognormalModelSpansTenOrdersOfMagnitude) {
  const std::vector<float> g = tn::lognormal_gradients(100000, 7);
  EXPECT_EQ(g, tn::lognormal_gradients(100000, 7));  // deterministic
  std::vector<double> l;
  std::size_t inside = 0, negative = 0;
  for (float x : g) {
    l.push_back(std::log10(std::fabs(static_cast<double>(x))));
    inside += (std::fabs(x) >= 1e-10f && std::fabs(x) <= 1e-1f);
    negative += x < 0;
  }
  std::nth_element(l.begin(), l.begin() + l.size() / 2, l.end());
  EXPECT_NEAR(l[l.size() / 2], -5.5, 0.02);  // median of log10|g|
  // +-3 sigma: 99.73 % of a normal distribution.
  const auto n = static_cast<double>(g.size());
  EXPECT_NEAR(static_cast<double>(inside) / n, 0.9973, 0.001);
  EXPECT_NEAR(static_cast<double>(negative) / n, 0.5, 0.01);
}

TEST(GradientLanding, ScalingMovesTheLognormalMassOutOfTheUnderflowRegion) {
  const std::vector<float> g = tn::lognormal_gradients(200000, 11);
  const auto n = static_cast<double>(g.size());
  const auto flushed = [&](int e) {
    const auto c = tn::count_landings(g, std::ldexp(1.0f, e), tn::Format::fp16);
    return static_cast<double>(c[static_cast<std::size_t>(tn::Landing::flushed_to_zero)]) / n;
  };
  const auto overflow = [&](int e) {
    const auto c = tn::count_landings(g, std::ldexp(1.0f, e), tn::Format::fp16);
    return static_cast<double>(c[static_cast<std::size_t>(tn::Landing::overflow)]) / n;
  };
  // Expected fractions from the normal CDF Phi(z) = erfc(-z / sqrt 2) / 2 (Python's math.erfc),
  // log10|g| ~ N(-5.5, 1.5). Flushed: P(|g| <= 2^-25 / S): S = 1 -> z = (-7.526 + 5.5) / 1.5
  // = -1.351 -> 8.84 %; S = 2^16 -> z = -4.561 -> 2.5e-6.
  EXPECT_NEAR(flushed(0), 0.0884, 0.003);
  EXPECT_LT(flushed(16), 2e-5);
  // Overflow: P(|g| >= 65520 / S): S = 2^24 -> z = (log10(65520 / 2^24) + 5.5) / 1.5 = 2.060
  // -> 1.96 %; S = 2^16 -> z = 3.666 -> 0.0123 %.
  EXPECT_NEAR(overflow(24), 0.0196, 0.002);
  EXPECT_NEAR(overflow(16), 1.23e-4, 6e-5);
}

}  // namespace
