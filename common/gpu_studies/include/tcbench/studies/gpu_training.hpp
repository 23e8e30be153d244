// The five-mode mixed-precision training run of tcbench/studies/mixed_precision_training.hpp on
// the GPU: the same problem, data, initial weights and element functions, with the GEMMs on
// cuBLASLt (FP16 or BF16 inputs on tensor cores with FP32 accumulation; FP32 on CUDA cores for
// the reference mode, or on TF32 tensor cores with GpuMath::tf32), FP32 master weights and Adam
// state, and the fused multi-tensor check-and-unscale of kernels/loss_scaling.hpp before every
// step. A GPU study: it knows cuBLASLt and tcbench's kernels, not the benchmark harness
// (bench_loss_scaling drives whole runs, bench_tensor_util single steps through GpuTrainer).
#pragma once

#include "tcbench/gemm_lt.hpp"
#include "tcbench/studies/mixed_precision_training.hpp"
#include "tcbench/studies/training_step_phases.hpp"

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace tcbench::studies {

// How the GEMMs of the FP32 mode compute: FFMA (CUBLAS_COMPUTE_32F_PEDANTIC, the reference and
// the SIMT path) or TF32 tensor cores (CUBLAS_COMPUTE_32F_FAST_TF32). The FP16 and BF16 modes
// always run on tensor cores with FP32 accumulation; tf32 is refused for them.
enum class GpuMath : std::uint8_t { standard, tf32 };

// Told on the host before and after each phase of a step (StepPhase order), with the stream
// the phase's work is enqueued on: at begin nothing of the phase is enqueued yet, at end all of
// it is (asynchronously: the work may still run). Every phase is told, also the optimizer of a
// skipped step (which then enqueues nothing). An observer may record events, push profiler
// ranges or synchronize; it must not enqueue work that changes the step's buffers.
class PhaseObserver {
 public:
  virtual void begin(StepPhase phase, cudaStream_t stream) = 0;
  virtual void end(StepPhase phase, cudaStream_t stream) = 0;

 protected:
  ~PhaseObserver() = default;
};

// One training run kept on the device, advanced one step at a time. The buffers, GEMM plans
// and the unscale's chunk table are made once; step() runs forward, backward, unscale (the host
// then reads the Inf/NaN flag and the tallies: one synchronization per step, as GradScaler's
// .item() does) and the optimizer unless the scaler skips.
class GpuTrainer {
 public:
  // Throws InvalidArgument for a bad config (or tf32 with a narrow mode) and Error when a GEMM
  // plan cannot be made on this GPU (the message says why). `lt` must outlive the trainer; the
  // work is enqueued on `stream`.
  GpuTrainer(const LtHandle& lt, int cc_major, int cc_minor, const TrainingConfig& cfg,
             TrainingMode mode, cudaStream_t stream, GpuMath math = GpuMath::standard);
  GpuTrainer(GpuTrainer&&) noexcept;
  GpuTrainer& operator=(GpuTrainer&&) noexcept;
  ~GpuTrainer();

  // One step; `observer` (optional) is told every phase boundary.
  TrainingStep step(PhaseObserver* observer = nullptr);
  // The five GEMMs of a step alone, on the trainer's current buffers (for timing them).
  void run_gemms(cudaStream_t stream) const;
  float scale() const;
  // cuBLASLt's numerical implementation of the forward GEMM ("HMMA ...", "FFMA ...").
  const std::string& gemm_impl() const;

  // Device memory a trainer of `cfg` in `mode` allocates (buffers only, not the GEMM workspaces).
  static std::size_t device_bytes(const TrainingConfig& cfg, TrainingMode mode);

  class Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

struct GpuTrainingResult {
  TrainingRun run;  // per step: loss, scale, skipped, gradient tally (as on the host)
  // Wall time per step over steps 1..n-1 (step 0 also loads the kernels), including the per-step
  // host synchronization that reads the Inf/NaN flag and the tallies.
  double seconds_per_step = 0;
  double gemm_seconds_per_step = 0;  // the five GEMMs of one step, timed with events once
  std::string gemm_impl;             // cuBLASLt's numerical implementation of the forward GEMM
};

// Why `mode` (with `math`) cannot train on a GPU of this compute capability (BF16 and TF32 below
// 8.0, tf32 with a narrow mode), or nullopt.
std::optional<std::string> training_unsupported_reason(int cc_major, int cc_minor,
                                                       const TrainingConfig& cfg, TrainingMode mode,
                                                       GpuMath math = GpuMath::standard);

// Runs `mode` for cfg.steps steps (or until the dynamic scale becomes unusable) on `stream`.
// `lt` must outlive the call. Throws InvalidArgument for a bad config and Error when a GEMM plan
// cannot be made on this GPU (BF16 below compute capability 8.0: the message says so).
GpuTrainingResult train_on_gpu(const LtHandle& lt, int cc_major, int cc_minor,
                               const TrainingConfig& cfg, TrainingMode mode, cudaStream_t stream,
                               GpuMath math = GpuMath::standard);

// The first step's loss of `cfg` in FP64: the FP32 data and initial weights unrounded, both
// GEMMs in FP64 on cuBLASLt, tanh and the loss on the host in double. The higher-precision
// reference of every mode's first loss, at widths where the host trainer is too slow.
double fp64_first_loss(const LtHandle& lt, int cc_major, int cc_minor, const TrainingConfig& cfg,
                       cudaStream_t stream);
// Device memory fp64_first_loss allocates.
std::size_t fp64_first_loss_bytes(const TrainingConfig& cfg);

}  // namespace tcbench::studies
