// FP8 scaling recipes as Transformer Engine defines them (transformer_engine/common/recipe/
// __init__.py: DelayedScaling defaults and Format; pytorch/quantization.py _default_sf_compute:
// sf = (fp8_max / amax) / 2^margin, previous scale kept when amax is 0, Inf or NaN, FLT_MAX when
// sf is Inf; _update_amax_history: roll by -1, zero slot 0; recipe_common.cuh
// compute_scale_from_amax for current scaling). FP8 maxima from arXiv:2209.05433 Table 1.
#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <algorithm>
#include <random>
#include <stdexcept>
#include <vector>

#include "tcbench/numerics/fp8_scaling.hpp"

namespace tn = tcbench::numerics;

namespace {

using tn::AmaxReduction;
using tn::DelayedScalingConfig;
using tn::Fp8Format;
using tn::RecipeFormat;
using tn::TensorRole;

std::vector<float> hist(const tn::DelayedScaler& s) {
  return {s.amax_history().begin(), s.amax_history().end()};
}

TEST(Fp8Recipe, HybridUsesE4m3ForwardE5m2Backward) {
  EXPECT_EQ(tn::fp8_format_for(RecipeFormat::hybrid, TensorRole::forward), Fp8Format::e4m3);
  EXPECT_EQ(tn::fp8_format_for(RecipeFormat::hybrid, TensorRole::backward), Fp8Format::e5m2);
  EXPECT_EQ(tn::fp8_format_for(RecipeFormat::e4m3, TensorRole::backward), Fp8Format::e4m3);
  const tn::DelayedScaler fwd({}, TensorRole::forward), bwd({}, TensorRole::backward);
  EXPECT_EQ(fwd.fp8_max(), 448.0f);
  EXPECT_EQ(bwd.fp8_max(), 57344.0f);
  EXPECT_EQ(fwd.config().amax_history_len, 1024);  // TE's DelayedScaling defaults
  EXPECT_EQ(fwd.config().margin, 0);
  EXPECT_EQ(fwd.config().amax_compute, AmaxReduction::max);
  EXPECT_EQ(fwd.config().format, RecipeFormat::hybrid);
}

// The recipes a layer runs with, by name (the benchmark names' recipe:<name> and the selector's
// labels), and the scaling rule and accumulation each stands for.
TEST(Fp8Recipe, NamesRulesAndAccumulation) {
  using tn::Fp8Recipe;
  EXPECT_EQ(tn::name(Fp8Recipe::delayed), "delayed");
  EXPECT_EQ(tn::name(Fp8Recipe::current), "current");
  EXPECT_EQ(tn::name(Fp8Recipe::delayed_split), "delayed_split");
  EXPECT_EQ(tn::name(tn::ScaleRule::current), "current");
  EXPECT_EQ(tn::scale_rule(Fp8Recipe::delayed_split), tn::ScaleRule::delayed);
  EXPECT_EQ(tn::scale_rule(Fp8Recipe::current), tn::ScaleRule::current);
  EXPECT_TRUE(tn::fast_accumulation(Fp8Recipe::delayed));
  EXPECT_TRUE(tn::fast_accumulation(Fp8Recipe::current));
  EXPECT_FALSE(tn::fast_accumulation(Fp8Recipe::delayed_split));
}

TEST(DelayedScaleFromAmax, FormulaMarginAndSpecialAmax) {
  EXPECT_EQ(tn::delayed_scale_from_amax(1.0f, 448.0f, 0, 7.0f), 448.0f);
  EXPECT_EQ(tn::delayed_scale_from_amax(448.0f, 448.0f, 0, 7.0f), 1.0f);
  EXPECT_EQ(tn::delayed_scale_from_amax(2.0f, 448.0f, 1, 7.0f), 112.0f);
  EXPECT_EQ(tn::delayed_scale_from_amax(2.0f, 448.0f, 3, 7.0f), 28.0f);
  EXPECT_EQ(tn::delayed_scale_from_amax(1.0f, 57344.0f, 0, 7.0f), 57344.0f);
  EXPECT_EQ(tn::delayed_scale_from_amax(0.0f, 448.0f, 0, 7.0f), 7.0f);
  EXPECT_EQ(tn::delayed_scale_from_amax(INFINITY, 448.0f, 0, 7.0f), 7.0f);
  EXPECT_EQ(tn::delayed_scale_from_amax(NAN, 448.0f, 0, 7.0f), 7.0f);
  EXPECT_EQ(tn::delayed_scale_from_amax(1e-44f, 448.0f, 0, 7.0f), FLT_MAX);  // 448/amax is Inf
  // The margin is applied after the division, so it cannot rescue an overflow.
  EXPECT_EQ(tn::delayed_scale_from_amax(1e-44f, 448.0f, 4, 7.0f), FLT_MAX);
}

TEST(DelayedScaler, HistoryRollsAndMaxCoversTheWindow) {
  tn::DelayedScaler s({.amax_history_len = 4}, TensorRole::forward);
  EXPECT_EQ(s.scale(), 1.0f);
  s.record_amax(2.0f);
  EXPECT_EQ(hist(s), (std::vector<float>{2, 0, 0, 0}));  // slot 0 stages this step's amax
  EXPECT_EQ(s.update(), 224.0f);
  EXPECT_EQ(hist(s), (std::vector<float>{0, 0, 0, 2}));
  s.record_amax(8.0f);
  EXPECT_EQ(s.update(), 56.0f);
  EXPECT_EQ(hist(s), (std::vector<float>{0, 0, 2, 8}));
  // The 8 stays in the window for amax_history_len updates, then leaves it.
  const float want[] = {56.0f, 56.0f, 56.0f, 448.0f};
  for (float w : want) {
    s.record_amax(1.0f);
    EXPECT_EQ(s.update(), w);
  }
  EXPECT_EQ(hist(s), (std::vector<float>{0, 1, 1, 1}));
  EXPECT_EQ(s.scale_inv(), 1.0f / 448.0f);
}

TEST(DelayedScaler, MostRecentFollowsTheCurrentAmax) {
  tn::DelayedScaler s({.amax_history_len = 4, .amax_compute = AmaxReduction::most_recent},
                      TensorRole::forward);
  const float amax[] = {2.0f, 8.0f, 1.0f, 4.0f};
  const float want[] = {224.0f, 56.0f, 448.0f, 112.0f};
  for (int i = 0; i < 4; ++i) {
    s.record_amax(amax[i]);
    EXPECT_EQ(s.update(), want[i]);
  }
}

TEST(DelayedScaler, RecordKeepsTheLargestWithinAStep) {
  tn::DelayedScaler s({.amax_history_len = 1}, TensorRole::backward);
  s.record_amax(3.0f);
  s.record_amax(-7.0f);  // amax is a magnitude
  s.record_amax(1.0f);
  EXPECT_EQ(s.update(), 57344.0f / 7.0f);
  EXPECT_EQ(hist(s), (std::vector<float>{0}));  // length 1: nothing to roll, slot 0 cleared
}

TEST(DelayedScaler, ZeroInfNanKeepThePreviousScale) {
  tn::DelayedScaler s({.amax_history_len = 1, .margin = 1}, TensorRole::forward);
  s.record_amax(7.0f);
  EXPECT_EQ(s.update(), 32.0f);  // 448 / 7 / 2
  EXPECT_EQ(s.update(), 32.0f);  // nothing recorded: amax 0
  s.record_amax(INFINITY);
  EXPECT_EQ(s.update(), 32.0f);
  s.record_amax(NAN);
  EXPECT_EQ(s.update(), 32.0f);
  s.record_amax(14.0f);
  EXPECT_EQ(s.update(), 16.0f);
  // With a longer window the Inf keeps the scale frozen until it rolls out of the history.
  tn::DelayedScaler w({.amax_history_len = 2}, TensorRole::forward);
  w.record_amax(4.0f);
  EXPECT_EQ(w.update(), 112.0f);
  w.record_amax(INFINITY);
  EXPECT_EQ(w.update(), 112.0f);
  w.record_amax(8.0f);
  EXPECT_EQ(w.update(), 112.0f);  // history still holds the Inf
  w.record_amax(8.0f);
  EXPECT_EQ(w.update(), 56.0f);
}

TEST(DelayedScaler, RejectsInvalidConfigs) {
  EXPECT_THROW(tn::DelayedScaler({.amax_history_len = 0}, TensorRole::forward),
               std::invalid_argument);
  EXPECT_THROW(tn::DelayedScaler({.margin = -1}, TensorRole::forward), std::invalid_argument);
  EXPECT_THROW(tn::DelayedScaler({.format = RecipeFormat::e5m2}, TensorRole::forward),
               std::invalid_argument);
}

TEST(CurrentScaling, ScaleFromAmaxEdgeCases) {
  EXPECT_EQ(tn::current_scale_from_amax(2.0f, 448.0f), 224.0f);
  EXPECT_EQ(tn::current_scale_from_amax(0.0f, 448.0f), 1.0f);
  EXPECT_EQ(tn::current_scale_from_amax(INFINITY, 448.0f), 1.0f);
  EXPECT_EQ(tn::current_scale_from_amax(NAN, 448.0f), 1.0f);
  EXPECT_EQ(tn::current_scale_from_amax(1e-44f, 448.0f), FLT_MAX);
  EXPECT_EQ(tn::current_scale_from_amax(0.0f, 448.0f, 0.5f), 896.0f);  // amax raised to epsilon
  EXPECT_EQ(tn::current_scale_from_amax(3.0f, 448.0f, 0.0f, true), 128.0f);  // 149.3 -> 2^7
  EXPECT_EQ(tn::current_scale_from_amax(1.0f, 448.0f, 0.0f, true), 256.0f);
  EXPECT_EQ(tn::current_scale_from_amax(1.75f, 448.0f, 0.0f, true), 256.0f);  // exactly 2^8
  EXPECT_EQ(tn::current_scale_from_amax(1e-44f, 448.0f, 0.0f, true), 0x1p127f);
}

TEST(CurrentScaling, LargestValueMapsToFp8Max) {
  std::mt19937 rng(2);
  std::normal_distribution<float> n(0.0f, 3.0f);
  std::vector<float> xs(10000);
  for (float& x : xs) x = n(rng);
  for (Fp8Format f : {Fp8Format::e4m3, Fp8Format::e5m2}) {
    const tn::CurrentScaled cs = tn::current_scaling(xs, f);
    EXPECT_EQ(cs.amax, tn::amax(xs));
    EXPECT_EQ(cs.scale_inv, 1.0f / cs.scale);
    std::vector<__nv_fp8_storage_t> q(xs.size());
    tn::cast_to_fp8(xs, cs.scale, f, q, tn::Saturation::none);
    float top = 0;
    for (auto v : q) {
      const float d = tn::fp8_to_float(v, f);
      ASSERT_TRUE(std::isfinite(d));  // current scaling cannot overflow
      top = std::fmax(top, std::fabs(d));
    }
    EXPECT_EQ(top, tn::fp8_max(f));
  }
  std::vector<__nv_fp8_storage_t> wrong(3);
  EXPECT_THROW(tn::cast_to_fp8(xs, 1.0f, Fp8Format::e4m3, wrong), std::invalid_argument);
}

// Activations that grow every step: delayed scaling casts with last step's scale and overflows
// (NaN in E4M3 without saturation); current scaling never does. This is the trade-off TE's docs
// describe between the two recipes.
TEST(DelayedVersusCurrent, DelayedLagsBehindGrowingActivations) {
  std::mt19937 rng(4);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> base(4096);
  for (float& x : base) x = u(rng);
  tn::DelayedScaler delayed({.amax_history_len = 16}, TensorRole::forward);
  std::size_t delayed_overflow = 0, current_overflow = 0;
  std::vector<float> xs(base.size());
  std::vector<__nv_fp8_storage_t> q(base.size());
  for (int step = 0; step < 8; ++step) {
    for (std::size_t i = 0; i < xs.size(); ++i) xs[i] = base[i] * std::exp2f(float(step));
    tn::cast_to_fp8(xs, delayed.scale(), Fp8Format::e4m3, q, tn::Saturation::none);
    for (auto v : q) delayed_overflow += std::isnan(tn::fp8_to_float(v, Fp8Format::e4m3));
    delayed.record_amax(tn::amax(xs));
    delayed.update();
    const tn::CurrentScaled cs = tn::current_scaling(xs, Fp8Format::e4m3);
    tn::cast_to_fp8(xs, cs.scale, Fp8Format::e4m3, q, tn::Saturation::none);
    for (auto v : q) current_overflow += std::isnan(tn::fp8_to_float(v, Fp8Format::e4m3));
  }
  EXPECT_GT(delayed_overflow, 0u);
  EXPECT_EQ(current_overflow, 0u);
}

// The integer encoding the amax kernels merge with atomicMax must order like amax_step.
TEST(AmaxBits, MaxOfBitsIsAmaxStep) {
  std::mt19937 rng(11);
  std::uniform_int_distribution<std::uint32_t> bits;
  std::vector<float> xs = {0.0f, -0.0f, 1.0f,    -448.0f,   INFINITY, -INFINITY,
                           NAN,  -NAN,  FLT_MIN, 0x1p-149f, FLT_MAX};
  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t b = bits(rng);
    float f;
    std::memcpy(&f, &b, sizeof f);
    xs.push_back(f);
  }
  for (std::size_t i = 0; i + 1 < xs.size(); ++i) {
    const float a = tn::amax_step(0.0f, xs[i]), b = tn::amax_step(0.0f, xs[i + 1]);
    const float want = tn::amax_step(a, b);
    const float got = tn::amax_from_bits(std::max(tn::amax_to_bits(a), tn::amax_to_bits(b)));
    if (std::isnan(want))
      EXPECT_TRUE(std::isnan(got)) << xs[i] << " " << xs[i + 1];
    else
      EXPECT_EQ(got, want) << xs[i] << " " << xs[i + 1];
  }
  EXPECT_EQ(tn::amax_to_bits(0.0f), 0u);  // the value a zeroed accumulator holds
  EXPECT_EQ(tn::amax_to_bits(-0.0f), 0u);
  EXPECT_EQ(tn::amax_to_bits(INFINITY), 0x7f800000u);
  EXPECT_EQ(tn::amax_to_bits(-NAN), tn::kAmaxNanBits);
}

}  // namespace
