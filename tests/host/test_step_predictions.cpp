// The "whole step" tables of docs/concepts/tensor-util.md, generated from the step model
// (studies/training_step_phases.hpp: every kernel's FLOP and bytes, each at its roofline) and
// tcbench's own datasheet rates (peaks.cpp via gpu_rates: H100 SXM and A100 SXM 80GB), so every
// predicted number on that page is reproducible (doc_tables.hpp: the markers, and how to print
// the fresh tables).
#include <gtest/gtest.h>

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "doc_tables.hpp"
#include "tcbench/gemm_prediction.hpp"
#include "tcbench/studies/alignment_model.hpp"
#include "tcbench/studies/training_step_phases.hpp"

namespace {

namespace ts = tcbench::studies;
using tcbench::Precision;

struct Path {
  Precision p;
  const char* label;
  std::size_t storage_bytes;
  bool tensor;
};
// The train_step rows' paths (benchmarks/bench_tensor_util.cpp, kStepPaths).
const Path kPaths[] = {{Precision::fp16, "fp16", 2, true},
                       {Precision::bf16, "bf16", 2, true},
                       {Precision::tf32, "tf32", 4, true},
                       {Precision::fp32, "fp32 (FFMA)", 4, false}};

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

ts::StepPrediction predict(const ts::TrainingConfig& cfg, const Path& path,
                           const tcbench::GpuSpec& gpu) {
  const auto rates = tcbench::gpu_rates(gpu, path.p);
  return ts::predict_step(ts::step_kernels(cfg, path.storage_bytes),
                          {rates.flops_per_s, path.tensor, rates.bytes_per_s});
}

// What each phase computes and moves, per width, for 2-byte storage (FP16/BF16) and 4-byte.
std::string work_table() {
  std::ostringstream o;
  o << "| width | storage | phase | GEMMs | GEMM GFLOP | GEMM MB | other kernels | other MB |\n"
       "|---|---|---|---|---|---|---|---|\n";
  const std::pair<const char*, ts::TrainingConfig> widths[] = {
      {"small MLP (32-64-8, 256)", ts::small_mlp_config()},
      {"4096 wide, 4096 tokens", ts::block_sized_config(4096, 4096)}};
  for (const auto& [label, cfg] : widths)
    for (std::size_t s : {std::size_t{2}, std::size_t{4}}) {
      const auto work = ts::phase_work(ts::step_kernels(cfg, s));
      for (ts::StepPhase p : ts::kStepPhases) {
        const ts::PhaseWork& w = work[ts::index(p)];
        o << "| " << label << " | " << s << " B | " << ts::name(p) << " | " << w.gemms << " | "
          << fmt("%.4g", w.gemm_flops * 1e-9) << " | " << fmt("%.4g", w.gemm_bytes * 1e-6) << " | "
          << w.other_kernels << " | " << fmt("%.4g", w.other_bytes * 1e-6) << " |\n";
      }
    }
  return o.str();
}

// The roofline prediction per GPU and precision at one width.
std::string prediction_table(const ts::TrainingConfig& cfg) {
  std::ostringstream o;
  o << "| GPU | precision | GEMM TFLOP/s (datasheet) | forward us (tensor %) | backward us "
       "(tensor %) | unscale us | optimizer us | step us | step tensor % | GEMM phases' "
       "ceiling % | step TFLOP/s |\n|---|---|---|---|---|---|---|---|---|---|---|\n";
  for (const ts::ModelGpu& g : ts::model_gpus())
    for (const Path& path : kPaths) {
      const ts::StepPrediction p = predict(cfg, path, g.spec);
      const auto us = [&](ts::StepPhase ph) { return fmt("%.1f", p.seconds[ts::index(ph)] * 1e6); };
      const auto pct = [&](ts::StepPhase ph) { return fmt("%.0f", p.tensor_pct[ts::index(ph)]); };
      o << "| " << g.label << " | " << path.label << " | "
        << fmt("%.1f", tcbench::gpu_rates(g.spec, path.p).flops_per_s * 1e-12) << " | "
        << us(ts::StepPhase::forward) << " (" << pct(ts::StepPhase::forward) << ") | "
        << us(ts::StepPhase::backward) << " (" << pct(ts::StepPhase::backward) << ") | "
        << us(ts::StepPhase::unscale) << " | " << us(ts::StepPhase::optimizer) << " | "
        << fmt("%.1f", p.step_seconds * 1e6) << " | " << fmt("%.0f", p.step_tensor_pct) << " | "
        << fmt("%.0f", p.ceiling_pct) << " | " << fmt("%.0f", p.flops_per_s * 1e-12) << " |\n";
    }
  return o.str();
}

std::map<std::string, std::string> tables() {
  return {{"step-work", work_table()},
          {"step-block", prediction_table(ts::block_sized_config(4096, 4096))},
          {"step-small", prediction_table(ts::small_mlp_config())}};
}

TEST(StepPredictions, DocsPageCarriesTheModelsTables) {
  tcbench::test::expect_page_tables("docs/concepts/tensor-util.md", "predicted", tables());
}

TEST(StepPredictions, HeadlineFacts) {
  // What the page's prose says, asserted. At 4096 wide on H100 SXM in FP16 the five GEMMs are
  // 687.2 GFLOP, 694.6 us at 989.4 TFLOP/s, and compute bound; the optimizer alone moves 28 B
  // for each of the 33.6 M masters (940 MB, 280 us at 3352 GB/s), so the step's tensor share is
  // well below the GEMM phases' ceiling, and the FFMA path reads 0 everywhere.
  const ts::TrainingConfig wide = ts::block_sized_config(4096, 4096);
  const tcbench::GpuSpec& h100 = ts::model_gpus()[0].spec;
  const ts::StepPrediction fp16 = predict(wide, kPaths[0], h100);
  EXPECT_NEAR(ts::step_gemm_flops(wide), 687.19e9, 0.01e9);
  EXPECT_NEAR(fp16.seconds[ts::index(ts::StepPhase::optimizer)], 28.0 * 2 * 4096 * 4096 / 3352.3e9,
              1e-7);
  EXPECT_LT(fp16.step_tensor_pct, fp16.ceiling_pct - 10);
  EXPECT_GT(fp16.ceiling_pct, 60);
  const ts::StepPrediction fp32 = predict(wide, kPaths[3], h100);
  EXPECT_EQ(fp32.step_tensor_pct, 0.0);
  // TF32 runs the GEMMs at half FP16's rate: a larger GEMM share and a higher step share.
  const ts::StepPrediction tf32 = predict(wide, kPaths[2], h100);
  EXPECT_GT(tf32.step_tensor_pct, fp16.step_tensor_pct);
  EXPECT_LT(tf32.flops_per_s, fp16.flops_per_s);
  // The small MLP's whole step is a few microseconds of roofline time: below one launch.
  const ts::StepPrediction small = predict(ts::small_mlp_config(), kPaths[0], h100);
  EXPECT_LT(small.step_seconds, 2e-6);
}

}  // namespace
