// The whole-step arithmetic of bench_tensor_util's train_step rows against cases computed by
// hand: phase shares from measured timelines, the time-weighted mix, the GEMM phases' ceiling,
// the FLOP and bytes of every kernel of a step, and the roofline prediction. Every expected
// number below is worked out in the comment beside it, not by the code under test.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tcbench/error.hpp"
#include "tcbench/schema.hpp"
#include "tcbench/studies/training_step_phases.hpp"

namespace ts = tcbench::studies;
using ts::StepPhase;

namespace {

ts::StepTimeline timeline(double begin, double end, ts::PerPhase<ts::Interval> phases) {
  return {{begin, end}, phases};
}

// Two steps, times in seconds:
//   step 0 [0, 10]:  forward [0, 3]   backward [3, 7]   unscale [7, 8]   gap   optimizer [9, 10]
//   step 1 [10, 20]: forward [10, 12] backward [12, 17] unscale [17, 18] gap   optimizer [19, 20]
// Totals of 20 s: forward 5, backward 9, unscale 2, optimizer 2, gaps 2
//   -> 25 %, 45 %, 10 %, 10 %, gaps 10 %; mean step 10 s, mean forward 2.5 s.
std::vector<ts::StepTimeline> two_steps() {
  return {timeline(0, 10, {{{0, 3}, {3, 7}, {7, 8}, {9, 10}}}),
          timeline(10, 20, {{{10, 12}, {12, 17}, {17, 18}, {19, 20}}})};
}

TEST(StepPhases, NamesAndGemmPhases) {
  EXPECT_EQ(ts::name(StepPhase::forward), "forward");
  EXPECT_EQ(ts::name(StepPhase::optimizer), "optimizer");
  EXPECT_TRUE(ts::has_gemms(StepPhase::forward));
  EXPECT_TRUE(ts::has_gemms(StepPhase::backward));
  EXPECT_FALSE(ts::has_gemms(StepPhase::unscale));
  EXPECT_FALSE(ts::has_gemms(StepPhase::optimizer));
}

TEST(StepPhases, EveryPhaseNamesItsSchemaCounters) {
  namespace c = tcbench::counters;
  for (StepPhase p : ts::kStepPhases) {
    EXPECT_EQ(c::tensor_active_in(ts::name(p)).name(),
              "tensor_active_pct_" + std::string(ts::name(p)));
    EXPECT_EQ(c::time_share(ts::name(p)).name(), "time_pct_" + std::string(ts::name(p)));
  }
  EXPECT_EQ(c::time_share("gaps").name(), "time_pct_gaps");
  EXPECT_THROW((void)c::tensor_active_in("gaps"), tcbench::InvalidArgument);  // no pipe there
  EXPECT_THROW((void)c::time_share("idle"), tcbench::InvalidArgument);
}

TEST(StepPhases, SharesAreRatiosOfTotalsWithTheGapsSeparate) {
  const ts::PhaseShares s = ts::phase_shares(two_steps());
  EXPECT_EQ(s.steps, 2u);
  EXPECT_DOUBLE_EQ(s.step_seconds, 10.0);
  EXPECT_DOUBLE_EQ(s.seconds[0], 2.5);
  EXPECT_DOUBLE_EQ(s.seconds[1], 4.5);
  EXPECT_DOUBLE_EQ(s.pct[0], 25.0);
  EXPECT_DOUBLE_EQ(s.pct[1], 45.0);
  EXPECT_DOUBLE_EQ(s.pct[2], 10.0);
  EXPECT_DOUBLE_EQ(s.pct[3], 10.0);
  EXPECT_NEAR(s.gaps_pct, 10.0, 1e-12);
}

TEST(StepPhases, MixAndCeilingByHand) {
  const ts::PhaseShares s = ts::phase_shares(two_steps());
  const ts::PerPhase<double> util{80.0, 90.0, 0.0, 0.0};
  // 0.25 x 80 + 0.45 x 90 + 0 + 0 (gaps count as idle) = 20 + 40.5
  EXPECT_DOUBLE_EQ(ts::time_weighted_mix(s, util), 60.5);
  // (25 x 80 + 45 x 90) / (25 + 45) = 6050 / 70
  EXPECT_NEAR(ts::gemm_phases_ceiling(s, util), 6050.0 / 70.0, 1e-12);
  // Unscale and the optimizer touch no tensor pipe in the ceiling even if they read some.
  const ts::PerPhase<double> busy_tail{80.0, 90.0, 50.0, 50.0};
  EXPECT_NEAR(ts::gemm_phases_ceiling(s, busy_tail), 6050.0 / 70.0, 1e-12);
  EXPECT_DOUBLE_EQ(ts::time_weighted_mix(s, busy_tail), 60.5 + 5.0 + 5.0);
}

TEST(StepPhases, SingleStepEqualsItsOwnFractions) {
  // One step [0, 4] with phases of 1 s each and no gap: 25 % each; a mix of 100/0/0/0 is 25.
  const std::vector<ts::StepTimeline> one{timeline(0, 4, {{{0, 1}, {1, 2}, {2, 3}, {3, 4}}})};
  const ts::PhaseShares s = ts::phase_shares(one);
  EXPECT_DOUBLE_EQ(s.gaps_pct, 0.0);
  EXPECT_DOUBLE_EQ(ts::time_weighted_mix(s, {100.0, 0.0, 0.0, 0.0}), 25.0);
  EXPECT_DOUBLE_EQ(ts::gemm_phases_ceiling(s, {100.0, 0.0, 0.0, 0.0}), 50.0);
}

void expect_refused(const std::vector<ts::StepTimeline>& steps, const std::string& words) {
  try {
    (void)ts::phase_shares(steps);
    FAIL() << "accepted a timeline that should fail with: " << words;
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(StepPhases, MalformedTimelinesAreRefusedWithTheStepAndPhase) {
  expect_refused({}, "at least one measured step");
  // backward begins before forward ends
  expect_refused({timeline(0, 10, {{{0, 4}, {3, 7}, {7, 8}, {9, 10}}})},
                 "step 0, phase backward begins at");
  // optimizer past the end of its step
  expect_refused({two_steps()[0], timeline(10, 20, {{{10, 12}, {12, 17}, {17, 18}, {19, 21}}})},
                 "step 1, phase optimizer ends at");
  // a phase that ends before it begins
  expect_refused({timeline(0, 10, {{{0, 3}, {3, 7}, {8, 7}, {9, 10}}})},
                 "step 0, phase unscale spans");
  // forward before the step begins
  expect_refused({timeline(1, 10, {{{0, 3}, {3, 7}, {7, 8}, {9, 10}}})},
                 "step 0, phase forward begins at");
  expect_refused({timeline(0, 0, {{{0, 0}, {0, 0}, {0, 0}, {0, 0}}})}, "not a positive");
  expect_refused({timeline(0, NAN, {{{0, 3}, {3, 7}, {7, 8}, {9, 10}}})}, "not a positive");
}

TEST(StepPhases, PercentagesOutsideTheCounterRangeAreRefused) {
  const ts::PhaseShares s = ts::phase_shares(two_steps());
  EXPECT_THROW((void)ts::time_weighted_mix(s, {250.0, 0, 0, 0}), std::invalid_argument);
  EXPECT_THROW((void)ts::time_weighted_mix(s, {NAN, 0, 0, 0}), std::invalid_argument);
  EXPECT_THROW((void)ts::gemm_phases_ceiling(s, {-1.0, 0, 0, 0}), std::invalid_argument);
  ts::PhaseShares no_gemm = s;
  no_gemm.pct = {0.0, 0.0, 50.0, 50.0};
  EXPECT_THROW((void)ts::gemm_phases_ceiling(no_gemm, {80.0, 90.0, 0, 0}), std::invalid_argument);
}

TEST(StepPhases, FlopsOfTheTwoWidths) {
  // Small MLP (b 256, in 32, hid 64, out 8): 2 x (64*256*32 + 8*256*64 + 8*64*256 + 64*256*8 +
  // 64*32*256) = 2 x (524288 + 131072 + 131072 + 131072 + 524288) = 2883584.
  EXPECT_DOUBLE_EQ(ts::step_gemm_flops(ts::small_mlp_config()), 2883584.0);
  // 4096 wide over 4096 tokens: five GEMMs of 2 x 4096^3 = 137438953472 each.
  EXPECT_DOUBLE_EQ(ts::step_gemm_flops(ts::block_sized_config(4096, 4096)), 5 * 137438953472.0);
}

TEST(StepPhases, KernelBytesOfATinyConfigByHand) {
  ts::TrainingConfig c;
  c.batch = 2;
  c.inputs = 3;
  c.hidden = 4;
  c.outputs = 5;
  // FP16 storage (2 B). W1 12, W2 20, masters 32 elements.
  const std::vector<ts::KernelWork> k = ts::step_kernels(c, 2);
  ASSERT_EQ(k.size(), 13u);
  // forward: cast (4 + 2) x 32 = 192; Z = W1 X: 2 x 4x2x3 = 48 FLOP, 2 x (12 + 6) + 2 x 8 = 52 B;
  // tanh 2 x 2 x 8 = 32; Y = a W2 H: 80 FLOP, 2 x (20 + 8) + 2 x 10 = 76 B; loss (2+2+4) x 10 = 80
  EXPECT_EQ(k[0].bytes, 192);
  EXPECT_EQ(k[1].flops, 48);
  EXPECT_EQ(k[1].bytes, 52);
  EXPECT_EQ(k[2].bytes, 32);
  EXPECT_EQ(k[3].flops, 80);
  EXPECT_EQ(k[3].bytes, 76);
  EXPECT_EQ(k[4].bytes, 80);
  const ts::PerPhase<ts::PhaseWork> w = ts::phase_work(k);
  EXPECT_EQ(w[0].gemms, 2);
  EXPECT_EQ(w[0].other_kernels, 3);
  EXPECT_EQ(w[0].gemm_flops, 128);
  EXPECT_EQ(w[0].gemm_bytes, 128);
  EXPECT_EQ(w[0].other_bytes, 304);
  // backward: dW2 (5x4x2) 80 FLOP, 2 x (10 + 8) + 4 x 20 = 116 B; store 8 x 20 = 160;
  // dH (4x2x5) 80 FLOP, 2 x (20 + 10) + 4 x 8 = 92 B; tanh' (4 + 4) x 8 = 64;
  // dW1 (4x3x2) 48 FLOP, 2 x (8 + 6) + 4 x 12 = 76 B; store 8 x 12 = 96
  EXPECT_EQ(w[1].gemms, 3);
  EXPECT_EQ(w[1].gemm_flops, 208);
  EXPECT_EQ(w[1].gemm_bytes, 116 + 92 + 76);
  EXPECT_EQ(w[1].other_bytes, 160 + 64 + 96);
  // unscale: read + write FP32, 8 x 32; Adam: p, m, v, g read and p, m, v written, 28 x 32
  EXPECT_EQ(w[2].other_bytes, 256);
  EXPECT_EQ(w[3].other_bytes, 896);
  EXPECT_EQ(w[2].gemms + w[3].gemms, 0);
  EXPECT_THROW((void)ts::step_kernels(c, 3), std::invalid_argument);
}

TEST(StepPhases, RooflinePredictionByHand) {
  // 1 PFLOP/s and 1 TB/s. forward: a GEMM of 2 TFLOP and 1 GB (compute, 2 ms) and 2 GB of
  // element-wise (2 ms): 4 ms, pipe busy 2 ms = 50 %. backward: 4 TFLOP, 1 GB: 4 ms at 100 %.
  // unscale 1 GB (1 ms), optimizer 3 GB (3 ms). Step 12 ms:
  // mix (4 x 50 + 4 x 100) / 12 = 50; ceiling (4 x 50 + 4 x 100) / 8 = 75; 6 TFLOP / 12 ms.
  const std::vector<ts::KernelWork> k{{StepPhase::forward, "g1", true, 2e12, 1e9},
                                      {StepPhase::forward, "e1", false, 0, 2e9},
                                      {StepPhase::backward, "g2", true, 4e12, 1e9},
                                      {StepPhase::unscale, "u", false, 0, 1e9},
                                      {StepPhase::optimizer, "a", false, 0, 3e9}};
  const ts::StepPrediction p = ts::predict_step(k, {1e15, true, 1e12});
  EXPECT_DOUBLE_EQ(p.seconds[0], 4e-3);
  EXPECT_DOUBLE_EQ(p.seconds[1], 4e-3);
  EXPECT_DOUBLE_EQ(p.step_seconds, 12e-3);
  EXPECT_DOUBLE_EQ(p.tensor_pct[0], 50.0);
  EXPECT_DOUBLE_EQ(p.tensor_pct[1], 100.0);
  EXPECT_DOUBLE_EQ(p.tensor_pct[3], 0.0);
  EXPECT_NEAR(p.step_tensor_pct, 50.0, 1e-9);
  EXPECT_NEAR(p.ceiling_pct, 75.0, 1e-9);
  EXPECT_NEAR(p.flops_per_s, 5e14, 1e3);
  // A memory-bound GEMM keeps the pipe busy only for its FLOP time: 8 GB -> 8 ms, 4 ms busy.
  std::vector<ts::KernelWork> slow = k;
  slow[2].bytes = 8e9;
  EXPECT_DOUBLE_EQ(ts::predict_step(slow, {1e15, true, 1e12}).tensor_pct[1], 50.0);
  // The FFMA path: the same times, no tensor work anywhere.
  const ts::StepPrediction simt = ts::predict_step(k, {1e15, false, 1e12});
  EXPECT_DOUBLE_EQ(simt.step_seconds, 12e-3);
  EXPECT_DOUBLE_EQ(simt.step_tensor_pct, 0.0);
  EXPECT_DOUBLE_EQ(simt.ceiling_pct, 0.0);
  EXPECT_THROW((void)ts::predict_step(k, {0.0, true, 1e12}), std::invalid_argument);
}

TEST(StepPhases, BlockSizedConfigUsesUniformTargetsAndKeepsTheInputs) {
  const ts::TrainingConfig wide = ts::block_sized_config(64, 128);
  EXPECT_EQ(wide.inputs, 64);
  EXPECT_EQ(wide.hidden, 64);
  EXPECT_EQ(wide.outputs, 64);
  EXPECT_EQ(wide.batch, 128);
  EXPECT_FALSE(wide.teacher_targets);
  const ts::RegressionData d = ts::make_regression_data(wide);
  ts::TrainingConfig teacher = wide;
  teacher.teacher_targets = true;
  const ts::RegressionData t = ts::make_regression_data(teacher);
  EXPECT_EQ(d.x, t.x);  // the same generator prefix: only the targets (and weights after) differ
  ASSERT_EQ(d.t.size(), 64u * 128u);
  for (float v : d.t) {
    EXPECT_GE(v, -wide.target_scale);
    EXPECT_LT(v, wide.target_scale);
  }
  EXPECT_THROW((void)ts::block_sized_config(0, 128), std::invalid_argument);
  // The host trainer runs it (few steps) and its loss is finite and falls.
  ts::TrainingConfig few = wide;
  few.steps = 20;
  const ts::TrainingRun run = ts::train_host(few, ts::TrainingMode::fp32);
  EXPECT_LT(run.final_loss(), run.steps.front().loss);
}

}  // namespace
