// The five-mode training run on the host: the facts docs/concepts/loss-scaling.md teaches.
// Without loss scaling FP16 loses the first layer's gradients (all below 2^-24) and stalls far
// above the FP32 loss; GradScaler's dynamic scale ends within a small margin of FP32; BF16 needs
// no scaling; a dynamic scaler skips exactly the steps whose gradients overflowed; a NaN stream
// halves the scale to nothing. The forward and backward passes are checked against an FP64
// finite-difference reference first, so the facts rest on a correct trainer.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../doc_tables.hpp"
#include "tcbench/studies/mixed_precision_training.hpp"

namespace tn = tcbench::studies;

namespace {

const std::map<tn::TrainingMode, tn::TrainingRun>& default_runs() {
  static const auto* runs = [] {
    auto* r = new std::map<tn::TrainingMode, tn::TrainingRun>;
    for (tn::TrainingMode m : tn::kTrainingModes) (*r)[m] = tn::train_host(tn::TrainingConfig{}, m);
    return r;
  }();
  return *runs;
}

// The loss of the FP32 model in FP64, written from the definition (no code shared with the
// trainer but the data).
double loss_fp64(const tn::TrainingConfig& c, const tn::RegressionData& d,
                 const std::vector<double>& w1, const std::vector<double>& w2) {
  double sum = 0;
  for (int j = 0; j < c.batch; ++j) {
    std::vector<double> h(static_cast<std::size_t>(c.hidden));
    for (int i = 0; i < c.hidden; ++i) {
      double z = 0;
      for (int l = 0; l < c.inputs; ++l) z += w1[i + l * c.hidden] * d.x[l + j * c.inputs];
      h[i] = std::tanh(z);
    }
    for (int o = 0; o < c.outputs; ++o) {
      double y = 0;
      for (int i = 0; i < c.hidden; ++i) y += w2[o + i * c.outputs] * h[i];
      const double r = c.target_scale * y - d.t[o + j * c.outputs];
      sum += r * r;
    }
  }
  return sum / (c.batch * c.outputs);
}

TEST(MixedPrecisionTraining, FirstLossAndGradientsMatchFp64FiniteDifferences) {
  const tn::TrainingConfig c;
  const tn::RegressionData d = tn::make_regression_data(c);
  std::vector<double> w1(d.w1.begin(), d.w1.end()), w2(d.w2.begin(), d.w2.end());
  const double l0 = loss_fp64(c, d, w1, w2);
  const tn::TrainingRun fp32 = default_runs().at(tn::TrainingMode::fp32);
  EXPECT_NEAR(fp32.steps[0].loss, l0, 1e-5 * l0);

  const int step0[] = {0};
  const std::vector<float> g = tn::fp32_backward_gradients(c, step0);
  const std::size_t b = c.batch, hid = c.hidden, out = c.outputs, in = c.inputs;
  const std::size_t dw2_at = out * b + 2 * hid * b, dw1_at = dw2_at + out * hid;
  ASSERT_EQ(g.size(), dw1_at + hid * in);
  auto central = [&](std::vector<double>& w, std::size_t i) {
    const double h = 1e-4 * std::max(1.0, std::fabs(w[i])), keep = w[i];
    w[i] = keep + h;
    const double up = loss_fp64(c, d, w1, w2);
    w[i] = keep - h;
    const double down = loss_fp64(c, d, w1, w2);
    w[i] = keep;
    return (up - down) / (2 * h);
  };
  for (std::size_t i : {0ul, 7ul, 100ul, 511ul}) {
    const double want = central(w2, i);
    EXPECT_NEAR(g[dw2_at + i], want, 1e-3 * std::fabs(want) + 1e-15) << "dW2[" << i << "]";
  }
  for (std::size_t i : {0ul, 33ul, 1000ul, 2047ul}) {
    const double want = central(w1, i);
    EXPECT_NEAR(g[dw1_at + i], want, 1e-3 * std::fabs(want) + 1e-15) << "dW1[" << i << "]";
  }
}

TEST(MixedPrecisionTraining, Fp16WithoutScalingLosesGradientsAndStallsFarAboveFp32) {
  const auto& runs = default_runs();
  const tn::TrainingRun& fp32 = runs.at(tn::TrainingMode::fp32);
  const tn::TrainingRun& plain = runs.at(tn::TrainingMode::fp16_unscaled);
  ASSERT_EQ(fp32.steps.size(), 400u);
  EXPECT_EQ(fp32.underflow_pct(), 0.0);
  EXPECT_LT(fp32.final_loss(), fp32.steps[0].loss / 100);  // FP32 really learns
  EXPECT_GT(plain.underflow_pct(), 30.0);
  EXPECT_GT(plain.final_loss(), 100 * fp32.final_loss());
  // The first layer's gradient is entirely zero once stored: it never learns.
  const tn::TrainingStep& last = plain.steps.back();
  EXPECT_GT(last.tally.flushed, 0u);
}

TEST(MixedPrecisionTraining, DynamicScalingEndsWithinAFewPercentOfFp32) {
  const auto& runs = default_runs();
  const float fp32 = runs.at(tn::TrainingMode::fp32).final_loss();
  const tn::TrainingRun& dyn = runs.at(tn::TrainingMode::fp16_dynamic);
  EXPECT_NEAR(dyn.final_loss(), fp32, 0.02 * fp32);
  EXPECT_LT(dyn.underflow_pct(), 5.0);
  // These gradients are tiny: 2^16 never overflows, and 400 steps are too few to grow it.
  EXPECT_EQ(dyn.skipped_steps(), 0);
  EXPECT_EQ(dyn.steps.back().scale_used, 65536.0f);
  // A static 2^10 is too small for gradients this small: better than nothing, worse than 2^16.
  const tn::TrainingRun& fixed = runs.at(tn::TrainingMode::fp16_static);
  EXPECT_LT(fixed.underflow_pct(), runs.at(tn::TrainingMode::fp16_unscaled).underflow_pct());
  EXPECT_GT(fixed.underflow_pct(), dyn.underflow_pct());
  EXPECT_LT(fixed.final_loss(), runs.at(tn::TrainingMode::fp16_unscaled).final_loss() / 10);
}

TEST(MixedPrecisionTraining, Bf16NeedsNoScaling) {
  const auto& runs = default_runs();
  const float fp32 = runs.at(tn::TrainingMode::fp32).final_loss();
  const tn::TrainingRun& bf16 = runs.at(tn::TrainingMode::bf16);
  EXPECT_EQ(bf16.underflow_pct(), 0.0);
  EXPECT_NEAR(bf16.final_loss(), fp32, 0.10 * fp32);
}

TEST(MixedPrecisionTraining, IsDeterministic) {
  tn::TrainingConfig c;
  c.steps = 30;
  const tn::TrainingRun a = tn::train_host(c, tn::TrainingMode::fp16_dynamic);
  const tn::TrainingRun b = tn::train_host(c, tn::TrainingMode::fp16_dynamic);
  for (std::size_t i = 0; i < a.steps.size(); ++i) {
    ASSERT_EQ(a.steps[i].loss, b.steps[i].loss) << i;
    ASSERT_EQ(a.steps[i].tally.flushed, b.steps[i].tally.flushed) << i;
  }
}

// A scale far too large, and a short growth interval, make the dynamic scaler overflow at the
// start and again whenever it grows back: every skipped step must be a step whose stored
// gradients held an Inf/NaN, and the other way round, and each one halves the scale.
TEST(MixedPrecisionTraining, DynamicScalerSkipsExactlyTheOverflowingSteps) {
  tn::TrainingConfig c;
  c.steps = 200;
  c.dynamic = {.init_scale = 0x1p40f, .growth_interval = 20};
  const tn::TrainingRun run = tn::train_host(c, tn::TrainingMode::fp16_dynamic);
  ASSERT_FALSE(run.stopped);
  int skipped = 0;
  for (std::size_t i = 0; i < run.steps.size(); ++i) {
    const tn::TrainingStep& s = run.steps[i];
    ASSERT_EQ(s.skipped, s.tally.non_finite > 0) << "step " << i;
    skipped += s.skipped;
    if (s.skipped && i + 1 < run.steps.size()) {
      EXPECT_EQ(run.steps[i + 1].scale_used, s.scale_used / 2) << "step " << i;
    }
  }
  // 3e-6 (the largest gradient) * 2^35 > 65504: at least 2^40..2^35 overflow at the start.
  EXPECT_GE(skipped, 6);
  EXPECT_EQ(run.skipped_steps(), run.non_finite_steps());
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(run.steps[i].skipped) << "step " << i;
  const float fp32 = tn::train_host(c, tn::TrainingMode::fp32).final_loss();
  EXPECT_LT(run.final_loss(), 1.5f * fp32);
}

// GradScaler has no floor: a stream of NaN gradients halves the scale on every step.
TEST(MixedPrecisionTraining, AllNanGradientsSkipEveryStepUntilTheScaleIsUnusable) {
  tn::TrainingConfig c;
  c.steps = 300;
  c.poison_targets = true;
  const tn::TrainingRun run = tn::train_host(c, tn::TrainingMode::fp16_dynamic);
  // 2^16 * 2^-143 = 2^-127 < FLT_MIN = 2^-126: subnormal after the 143rd halving.
  ASSERT_TRUE(run.stopped);
  EXPECT_EQ(run.steps.size(), 143u);
  EXPECT_NE(run.stopped->find("stopped at step 143"), std::string::npos) << *run.stopped;
  EXPECT_NE(run.stopped->find("subnormal"), std::string::npos) << *run.stopped;
  float want = 65536.0f;
  for (const tn::TrainingStep& s : run.steps) {
    ASSERT_TRUE(s.skipped);
    ASSERT_EQ(s.scale_used, want);
    want /= 2;
  }
}

TEST(DynamicLossScaler, NanStreamReachesZeroAfter166StepsAndNeverRecovers) {
  tn::DynamicLossScaler s({.growth_interval = 1});
  int steps = 0;
  while (s.scale() != 0.0f) {
    s.update(true);
    ++steps;
  }
  // 2^16 halved 165 times is 2^-149, the smallest subnormal; once more is the tie 2^-150, which
  // rounds to even: 0.
  EXPECT_EQ(steps, 166);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(s.update(false).scale_after, 0.0f);  // 0 * 2 = 0
  EXPECT_TRUE(tn::unusable_scale_reason(0.0f, 166).has_value());
  EXPECT_TRUE(tn::unusable_scale_reason(0x1p-127f, 143).has_value());
  EXPECT_FALSE(tn::unusable_scale_reason(0x1p-126f, 142).has_value());
  // Why a subnormal scale is already useless: from 2^-128 on its reciprocal is Inf in FP32.
  EXPECT_EQ(tn::inverse_scale(0x1p-127f), 0x1p127f);
  EXPECT_TRUE(std::isinf(tn::inverse_scale(0x1p-128f)));
}

// One sentence per bad value, naming it, from the scalers' constructors, which every front end
// (the trainer's config included) goes through.
template <typename F>
std::string error_of(F&& f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(LossScalingBadInput, EveryBadScaleOrFactorIsOneClearError) {
  using C = tn::GradScalerConfig;
  for (float s : {0.0f, -1.0f, NAN, INFINITY, -INFINITY}) {
    EXPECT_NE(error_of([&] { tn::StaticLossScaler{s}; }).find("scale must be positive and finite"),
              std::string::npos)
        << s;
    EXPECT_NE(error_of([&] {
                tn::DynamicLossScaler(C{.init_scale = s});
              }).find("init_scale must be positive and finite"),
              std::string::npos)
        << s;
  }
  for (double g : {1.0, 0.5, 0.0, -2.0, static_cast<double>(NAN)})
    EXPECT_NE(error_of([&] {
                tn::DynamicLossScaler(C{.growth_factor = g});
              }).find("growth_factor must be > 1"),
              std::string::npos)
        << g;
  for (double b : {0.0, 1.0, 1.5, -0.5, static_cast<double>(NAN)})
    EXPECT_NE(error_of([&] {
                tn::DynamicLossScaler(C{.backoff_factor = b});
              }).find("backoff_factor must be in (0, 1)"),
              std::string::npos)
        << b;
  for (int n : {0, -1})
    EXPECT_NE(error_of([&] {
                tn::DynamicLossScaler(C{.growth_interval = n});
              }).find("growth_interval must be >= 1"),
              std::string::npos)
        << n;
  // The trainer's config is judged by the same constructors.
  tn::TrainingConfig c;
  c.static_scale = -4.0f;
  EXPECT_NE(error_of([&] {
              tn::train_host(c, tn::TrainingMode::fp32);
            }).find("scale must be positive and finite"),
            std::string::npos);
  c = {};
  c.dynamic.backoff_factor = 2.0;
  EXPECT_NE(error_of([&] { c.validate(); }).find("backoff_factor"), std::string::npos);
  c = {};
  c.steps = 0;
  EXPECT_NE(error_of([&] { c.validate(); }).find("steps must be >= 1, got 0"), std::string::npos);
}

// The "what you should see" tables of docs/concepts/loss-scaling.md, from the runs and sweeps
// the assertions above hold to their facts (doc_tables.hpp: the markers, and how to print).
std::string landing_table(const std::vector<float>& g) {
  std::string out =
      "| scale | FP16 normal % | FP16 subnormal % | FP16 flushed % | FP16 overflow % "
      "| BF16 flushed % | BF16 overflow % |\n|---|---|---|---|---|---|---|\n";
  char buf[160];
  for (int e : tn::kSweepScaleLog2) {
    const auto r = tn::analyze_gradient_range(g, std::ldexp(1.0f, e));
    std::snprintf(buf, sizeof buf, "| 2^%d | %.2f | %.2f | %.2f | %.3f | %.2f | %.3f |\n", e,
                  100 * r.fp16.normal, 100 * r.fp16.subnormal, 100 * r.fp16.flushed_to_zero,
                  100 * r.fp16.overflow, 100 * r.bf16.flushed_to_zero, 100 * r.bf16.overflow);
    out += buf;
  }
  return out;
}

std::string modes_table() {
  const auto& runs = default_runs();
  const float fp32 = runs.at(tn::TrainingMode::fp32).final_loss();
  std::string out =
      "| mode | loss step 0 | step 50 | step 100 | step 399 (final) | final / FP32 | "
      "lost to underflow % | skipped steps | final scale |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  char buf[256];
  for (tn::TrainingMode m : tn::kTrainingModes) {
    const tn::TrainingRun& r = runs.at(m);
    std::snprintf(buf, sizeof buf, "| %s | %.3e | %.3e | %.3e | %.3e | %.2f | %.2f | %d | %g |\n",
                  std::string(tn::name(m)).c_str(), r.steps[0].loss, r.steps[50].loss,
                  r.steps[100].loss, r.final_loss(), r.final_loss() / fp32, r.underflow_pct(),
                  r.skipped_steps(), r.steps.back().scale_used);
    out += buf;
  }
  return out;
}

TEST(MixedPrecisionTraining, DocsPageCarriesTheTables) {
  const int at[] = {0, 100, 399};
  tcbench::test::expect_page_tables(
      "docs/concepts/loss-scaling.md", "computed",
      {{"landing-lognormal", landing_table(tn::lognormal_gradients(1'000'000, 7))},
       {"landing-mlp", landing_table(tn::fp32_backward_gradients(tn::TrainingConfig{}, at))},
       {"training-modes", modes_table()}});
}

}  // namespace
