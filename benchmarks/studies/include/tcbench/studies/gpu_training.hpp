// The five-mode mixed-precision training run of tcbench/studies/mixed_precision_training.hpp on
// the GPU: the same problem, data, initial weights and element functions, with the GEMMs on
// cuBLASLt (FP16 or BF16 inputs on tensor cores with FP32 accumulation; FP32 on CUDA cores for
// the reference mode), FP32 master weights and Adam state, and the fused multi-tensor
// check-and-unscale of kernels/loss_scaling.hpp before every step. A GPU study: it knows cuBLASLt
// and tcbench's kernels, not the benchmark harness (bench_loss_scaling drives it).
#pragma once

#include "tcbench/gemm_lt.hpp"
#include "tcbench/studies/mixed_precision_training.hpp"

#include <cuda_runtime_api.h>

#include <optional>
#include <string>

namespace tcbench::studies {

struct GpuTrainingResult {
  TrainingRun run;  // per step: loss, scale, skipped, gradient tally (as on the host)
  // Wall time per step over steps 1..n-1 (step 0 also loads the kernels), including the per-step
  // host synchronization that reads the Inf/NaN flag and the tallies.
  double seconds_per_step = 0;
  double gemm_seconds_per_step = 0;  // the five GEMMs of one step, timed with events once
  std::string gemm_impl;             // cuBLASLt's numerical implementation of the forward GEMM
};

// Why `mode` cannot train on a GPU of this compute capability (BF16 below 8.0), or nullopt.
std::optional<std::string> training_unsupported_reason(int cc_major, int cc_minor,
                                                       const TrainingConfig& cfg,
                                                       TrainingMode mode);

// Runs `mode` for cfg.steps steps (or until the dynamic scale becomes unusable) on `stream`.
// `lt` must outlive the call. Throws InvalidArgument for a bad config and Error when a GEMM plan
// cannot be made on this GPU (BF16 below compute capability 8.0: the message says so).
GpuTrainingResult train_on_gpu(const LtHandle& lt, int cc_major, int cc_minor,
                               const TrainingConfig& cfg, TrainingMode mode, cudaStream_t stream);

}  // namespace tcbench::studies
