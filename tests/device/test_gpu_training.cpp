// The GPU training run (cuBLASLt GEMMs, tcbench kernels) against the host run of the same
// config: the first loss agrees (same data and weights; only the GEMMs' summation order and the
// device tanhf differ), and the facts of the host test hold on the GPU too. Skips without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "gpu_test.hpp"
#include "tcbench/cuda_owners.hpp"
#include "tcbench/gemm_lt.hpp"
#include "tcbench/studies/gpu_training.hpp"

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

}  // namespace
