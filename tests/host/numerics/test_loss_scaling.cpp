// Loss scaling. The dynamic scaler must reproduce PyTorch GradScaler step for step: defaults
// init 2^16, growth x2 after 2000 consecutive clean steps, backoff x0.5 on any Inf/NaN with the
// step skipped and the clean-step counter reset, and a growth that would overflow to Inf is
// dropped (pytorch/pytorch aten/src/ATen/native/cuda/AmpKernels.cu, amp_update_scale_cuda_kernel;
// torch/amp/grad_scaler.py). Expected sequences below are written out from that rule.
#include <gtest/gtest.h>

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

}  // namespace
