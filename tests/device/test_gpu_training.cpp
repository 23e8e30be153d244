// The GPU training run (cuBLASLt GEMMs, tcbench kernels) against the host run of the same
// config: the first loss agrees (same data and weights; only the GEMMs' summation order and the
// device tanhf differ), and the facts of the host test hold on the GPU too. Then the single-step
// API bench_tensor_util profiles: every phase is told in order (also in a skipped step), TF32
// GEMMs still agree with the host at the small width, the FP64 reference of the first loss
// matches the host's FP64 loss, and a block-sized step agrees with it in every precision.
// Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "gpu_test.hpp"
#include "tcbench/cuda_owners.hpp"
#include "tcbench/gemm_lt.hpp"
#include "tcbench/studies/gpu_training.hpp"
#include "tcbench/studies/phase_timer.hpp"
#include "tcbench/studies/training_step_phases.hpp"

namespace tn = tcbench::studies;

namespace {

TEST(MixedPrecisionTrainingDevice, FiveModesReproduceTheHostFacts) {
  TCB_REQUIRE_GPU(dev);
  tn::TrainingConfig cfg;
  cfg.steps = 150;
  tcbench::Stream stream;
  tcbench::LtHandle lt;
  std::map<tn::TrainingMode, tn::GpuTrainingResult> gpu;
  for (tn::TrainingMode m : tn::kTrainingModes) {
    if (auto why = tn::training_unsupported_reason(dev.spec.cc_major, dev.spec.cc_minor, cfg, m)) {
      ADD_FAILURE() << "not run here: " << *why;  // every mode runs on sm_80+
      continue;
    }
    gpu[m] = tn::train_on_gpu(lt, dev.spec.cc_major, dev.spec.cc_minor, cfg, m, stream.get());
    const tn::TrainingRun host = tn::train_host(cfg, m);
    const tn::TrainingRun& run = gpu[m].run;
    ASSERT_EQ(run.steps.size(), host.steps.size()) << tn::name(m);
    EXPECT_NEAR(run.steps[0].loss, host.steps[0].loss, 1e-3 * host.steps[0].loss) << tn::name(m);
    EXPECT_EQ(run.steps[0].tally.stored, host.steps[0].tally.stored) << tn::name(m);
    EXPECT_NEAR(run.underflow_pct(), host.underflow_pct(), 2.0) << tn::name(m);
    EXPECT_NEAR(run.final_loss(), host.final_loss(), 0.05 * host.final_loss()) << tn::name(m);
    EXPECT_GT(gpu[m].seconds_per_step, 0.0);
    EXPECT_GT(gpu[m].gemm_seconds_per_step, 0.0);
  }
  if (gpu.size() != tn::kTrainingModes.size()) return;
  const float fp32 = gpu[tn::TrainingMode::fp32].run.final_loss();
  EXPECT_GT(gpu[tn::TrainingMode::fp16_unscaled].run.final_loss(), 100 * fp32);
  EXPECT_NEAR(gpu[tn::TrainingMode::fp16_dynamic].run.final_loss(), fp32, 0.05 * fp32);
  EXPECT_EQ(gpu[tn::TrainingMode::fp16_dynamic].run.skipped_steps(), 0);
  EXPECT_EQ(gpu[tn::TrainingMode::fp16_dynamic].gemm_impl.rfind("HMMA", 0), 0u)
      << gpu[tn::TrainingMode::fp16_dynamic].gemm_impl;
}

TEST(MixedPrecisionTrainingDevice, NanGradientsStopTheRunWhenTheScaleIsSubnormal) {
  TCB_REQUIRE_GPU(dev);
  tn::TrainingConfig cfg;
  cfg.steps = 300;
  cfg.poison_targets = true;
  tcbench::Stream stream;
  tcbench::LtHandle lt;
  const tn::GpuTrainingResult r = tn::train_on_gpu(lt, dev.spec.cc_major, dev.spec.cc_minor, cfg,
                                                   tn::TrainingMode::fp16_dynamic, stream.get());
  ASSERT_TRUE(r.run.stopped);
  EXPECT_EQ(r.run.steps.size(), 143u);
  EXPECT_EQ(r.run.skipped_steps(), 143);
}

// Records what it is told, as "begin forward", "end forward", ...
class Recorder final : public tn::PhaseObserver {
 public:
  void begin(tn::StepPhase p, cudaStream_t) override { told.push_back("begin " + name_of(p)); }
  void end(tn::StepPhase p, cudaStream_t) override { told.push_back("end " + name_of(p)); }
  std::vector<std::string> told;

 private:
  static std::string name_of(tn::StepPhase p) { return std::string(tn::name(p)); }
};

std::vector<std::string> one_step_in_order() {
  std::vector<std::string> out;
  for (tn::StepPhase p : tn::kStepPhases) {
    out.push_back("begin " + std::string(tn::name(p)));
    out.push_back("end " + std::string(tn::name(p)));
  }
  return out;
}

TEST(GpuTrainerDevice, ObserverIsToldEveryPhaseInOrderAndStepsMatchTrainOnGpu) {
  TCB_REQUIRE_GPU(dev);
  tn::TrainingConfig cfg;
  cfg.steps = 3;
  tcbench::Stream stream;
  tcbench::LtHandle lt;
  const tn::GpuTrainingResult whole = tn::train_on_gpu(
      lt, dev.spec.cc_major, dev.spec.cc_minor, cfg, tn::TrainingMode::fp16_dynamic, stream.get());
  tn::GpuTrainer trainer(lt, dev.spec.cc_major, dev.spec.cc_minor, cfg,
                         tn::TrainingMode::fp16_dynamic, stream.get());
  for (int s = 0; s < cfg.steps; ++s) {
    Recorder rec;
    const tn::TrainingStep step = trainer.step(&rec);
    EXPECT_EQ(rec.told, one_step_in_order()) << "step " << s;
    EXPECT_FLOAT_EQ(step.loss, whole.run.steps.at(static_cast<std::size_t>(s)).loss) << s;
    EXPECT_FALSE(step.skipped);
  }
}

TEST(GpuTrainerDevice, SkippedStepStillTellsTheOptimizerPhase) {
  TCB_REQUIRE_GPU(dev);
  tn::TrainingConfig cfg;
  cfg.poison_targets = true;  // NaN gradients: the dynamic scaler skips
  tcbench::Stream stream;
  tcbench::LtHandle lt;
  tn::GpuTrainer trainer(lt, dev.spec.cc_major, dev.spec.cc_minor, cfg,
                         tn::TrainingMode::fp16_dynamic, stream.get());
  Recorder rec;
  EXPECT_TRUE(trainer.step(&rec).skipped);
  EXPECT_EQ(rec.told, one_step_in_order());
}

TEST(GpuTrainerDevice, Tf32GemmsAgreeWithTheHostFp32RunAtTheSmallWidth) {
  TCB_REQUIRE_GPU(dev);
  tn::TrainingConfig cfg;
  cfg.steps = 150;
  if (auto why = tn::training_unsupported_reason(dev.spec.cc_major, dev.spec.cc_minor, cfg,
                                                 tn::TrainingMode::fp32, tn::GpuMath::tf32))
    GTEST_SKIP() << *why;
  tcbench::Stream stream;
  tcbench::LtHandle lt;
  const tn::GpuTrainingResult tf32 =
      tn::train_on_gpu(lt, dev.spec.cc_major, dev.spec.cc_minor, cfg, tn::TrainingMode::fp32,
                       stream.get(), tn::GpuMath::tf32);
  const tn::TrainingRun host = tn::train_host(cfg, tn::TrainingMode::fp32);
  // TF32 rounds the GEMM inputs to 10 significand bits (as FP16 storage does): the same 1e-3.
  EXPECT_NEAR(tf32.run.steps[0].loss, host.steps[0].loss, 1e-3 * host.steps[0].loss);
  EXPECT_NEAR(tf32.run.final_loss(), host.final_loss(), 0.05 * host.final_loss());
  EXPECT_EQ(tf32.run.skipped_steps(), 0);
  EXPECT_THROW(tn::GpuTrainer(lt, dev.spec.cc_major, dev.spec.cc_minor, cfg, tn::TrainingMode::bf16,
                              stream.get(), tn::GpuMath::tf32),
               tcbench::InvalidArgument);
}

// The first loss of the FP32 model in FP64, from the definition (as the host test writes it).
double host_loss_fp64(const tn::TrainingConfig& c) {
  const tn::RegressionData d = tn::make_regression_data(c);
  double sum = 0;
  for (int j = 0; j < c.batch; ++j) {
    std::vector<double> h(static_cast<std::size_t>(c.hidden));
    for (int i = 0; i < c.hidden; ++i) {
      double z = 0;
      for (int l = 0; l < c.inputs; ++l)
        z += double{d.w1[static_cast<std::size_t>(i + l * c.hidden)]} *
             d.x[static_cast<std::size_t>(l + j * c.inputs)];
      h[static_cast<std::size_t>(i)] = std::tanh(z);
    }
    for (int o = 0; o < c.outputs; ++o) {
      double y = 0;
      for (int i = 0; i < c.hidden; ++i)
        y += double{d.w2[static_cast<std::size_t>(o + i * c.outputs)]} *
             h[static_cast<std::size_t>(i)];
      const double r = c.target_scale * y - d.t[static_cast<std::size_t>(o + j * c.outputs)];
      sum += r * r;
    }
  }
  return sum / (c.batch * c.outputs);
}

TEST(GpuTrainerDevice, Fp64ReferenceMatchesTheHostsFp64Loss) {
  TCB_REQUIRE_GPU(dev);
  tcbench::Stream stream;
  tcbench::LtHandle lt;
  for (const tn::TrainingConfig& cfg : {tn::small_mlp_config(), tn::block_sized_config(96, 80)}) {
    const double want = host_loss_fp64(cfg);
    const double got =
        tn::fp64_first_loss(lt, dev.spec.cc_major, dev.spec.cc_minor, cfg, stream.get());
    EXPECT_NEAR(got, want, 1e-12 * want) << cfg.hidden;  // FP64 both: summation order only
  }
}

// What bench_tensor_util checks before it times a train_step row, at a block-sized width small
// enough for a test: every precision's first step is finite, not skipped, and within 1e-3 of
// the FP64 loss (rounding errors of 16-bit storage average out over the 2M outputs).
TEST(GpuTrainerDevice, BlockSizedFirstStepAgreesWithFp64InEveryPrecision) {
  TCB_REQUIRE_GPU(dev);
  const tn::TrainingConfig cfg = tn::block_sized_config(1024, 2048);
  tcbench::Stream stream;
  tcbench::LtHandle lt;
  const double ref =
      tn::fp64_first_loss(lt, dev.spec.cc_major, dev.spec.cc_minor, cfg, stream.get());
  const std::pair<tn::TrainingMode, tn::GpuMath> paths[] = {
      {tn::TrainingMode::fp16_dynamic, tn::GpuMath::standard},
      {tn::TrainingMode::bf16, tn::GpuMath::standard},
      {tn::TrainingMode::fp32, tn::GpuMath::tf32},
      {tn::TrainingMode::fp32, tn::GpuMath::standard}};
  for (const auto& [mode, math] : paths) {
    if (auto why =
            tn::training_unsupported_reason(dev.spec.cc_major, dev.spec.cc_minor, cfg, mode, math))
      continue;  // BF16 and TF32 below compute capability 8.0
    tn::GpuTrainer trainer(lt, dev.spec.cc_major, dev.spec.cc_minor, cfg, mode, stream.get(), math);
    const tn::TrainingStep s = trainer.step();
    const std::string what =
        std::string(tn::name(mode)) + (math == tn::GpuMath::tf32 ? "/tf32" : "");
    EXPECT_NEAR(s.loss, ref, 1e-3 * ref) << what;
    EXPECT_FALSE(s.skipped) << what;
    EXPECT_EQ(s.tally.non_finite, 0u) << what;
    EXPECT_LT(static_cast<double>(s.tally.flushed), 0.5 * static_cast<double>(s.tally.stored))
        << what;
  }
}

TEST(GpuTrainerDevice, PhaseTimerGivesWellFormedShares) {
  TCB_REQUIRE_GPU(dev);
  const tn::TrainingConfig cfg = tn::block_sized_config(512, 1024);
  tcbench::Stream stream;
  tcbench::LtHandle lt;
  tn::GpuTrainer trainer(lt, dev.spec.cc_major, dev.spec.cc_minor, cfg,
                         tn::TrainingMode::fp16_dynamic, stream.get());
  constexpr std::size_t kSteps = 8;
  tn::PhaseTimer timer(kSteps);
  for (std::size_t i = 0; i < kSteps; ++i) trainer.step(&timer);
  EXPECT_THROW(trainer.step(&timer), tcbench::Error);  // no room left
  const std::vector<tn::StepTimeline> t = timer.timelines();
  ASSERT_EQ(t.size(), kSteps);
  const tn::PhaseShares s = tn::phase_shares(t);
  double sum = s.gaps_pct;
  for (tn::StepPhase p : tn::kStepPhases) {
    EXPECT_GT(s.pct[tn::index(p)], 0.0) << tn::name(p);
    sum += s.pct[tn::index(p)];
  }
  EXPECT_NEAR(sum, 100.0, 1e-9);
  // The unscale phase ends before the host reads the flag; the optimizer begins after: a gap.
  EXPECT_GT(s.gaps_pct, 0.0);
}

}  // namespace
