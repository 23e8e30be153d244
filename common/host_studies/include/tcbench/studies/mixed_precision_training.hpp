// A small mixed-precision training run in five modes (FP32; FP16 without loss scaling, with a
// static scale, with GradScaler's dynamic scale; BF16 without scaling), done on the host with the
// narrow formats emulated through CUDA's own host conversions, so every number is deterministic
// and the GPU trainer (common/gpu_studies/src/gpu_training.cpp, kernels/training_step.cu) runs the
// very same element functions (tcbench/numerics/training_math.hpp).
//
// The problem: teacher-student regression with a two-layer tanh MLP,
//     y = W2 tanh(W1 x),  loss = mean over outputs and samples of (y - t)^2,
// targets t = target_scale * V2 tanh(V1 x) from a fixed random teacher. The targets are small
// (target_scale = 1e-3, think of a quantity measured in large units), and the mean over
// batch x outputs divides the loss gradient by another 2048, so dL/dy is ~1e-6 at the start and
// falls as the fit improves. The first layer's gradients are another factor |W2| ~ 1e-3 smaller
// (backpropagated through the output layer), ~1e-9: all of them lie below FP16's smallest
// subnormal (2^-24 ~ 6e-8) and round to zero without loss scaling. That is the regime of
// Micikevicius et al.'s SSD example (arXiv:1710.03740, Fig. 3): most activation gradients below
// 2^-24. Adam (scale-invariant per element) makes the FP32 run converge quickly despite the tiny
// gradients, so the only thing separating the modes is what the narrow formats keep.
//
// Storage follows mixed-precision practice (apex O2 / NVIDIA's guide): FP32 master weights and
// optimizer state; weights cast to the narrow format for every step; GEMM inputs and outputs in
// the narrow format with FP32 accumulation; the loss in FP32; every gradient tensor of the
// backward pass stored in the narrow format; weight gradients copied to FP32 master gradients,
// unscaled and checked for Inf/NaN there (check_and_unscale), then the step is taken or skipped.
#pragma once

#include "tcbench/numerics/enum_names.hpp"
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tcbench/numerics/loss_scaling.hpp"
#include "tcbench/precision.hpp"
#include "tcbench/numerics/training_math.hpp"

namespace tcbench::numerics {}  // namespace tcbench::numerics

namespace tcbench::studies {

// Studies are loops and data on top of the numerics vocabulary (formats, quantization,
// calibration, scaling rules): its names are this namespace's too.
using namespace tcbench::numerics;

enum class TrainingMode : std::uint8_t { fp32, fp16_unscaled, fp16_static, fp16_dynamic, bf16 };
inline constexpr std::array<TrainingMode, 5> kTrainingModes = {
    TrainingMode::fp32, TrainingMode::fp16_unscaled, TrainingMode::fp16_static,
    TrainingMode::fp16_dynamic, TrainingMode::bf16};

// The benchmark names of the modes.
inline constexpr numerics::EnumName<TrainingMode> kTrainingModeNames[] = {
    {TrainingMode::fp32, "fp32"},
    {TrainingMode::fp16_unscaled, "fp16_noscale"},
    {TrainingMode::fp16_static, "fp16_static"},
    {TrainingMode::fp16_dynamic, "fp16_dynamic"},
    {TrainingMode::bf16, "bf16_noscale"}};
static_assert(numerics::names_every_enumerator(kTrainingModeNames, TrainingMode::bf16));
constexpr std::string_view name(TrainingMode m) {
  return numerics::name_in(kTrainingModeNames, m);
}

// Where a mode stores activations and gradients, and the GEMM precision of the same name
// (fp32, fp16, bf16) that its benchmarks and study rows are named after.
numerics::Storage storage_of(TrainingMode m);
Precision precision_of(TrainingMode m);

// Configuration and results ------------------------------------------------------------------

struct TrainingConfig {
  int batch = 256;  // fixed training set, full-batch steps
  int inputs = 32;
  int hidden = 64;
  int outputs = 8;
  int steps = 400;
  float target_scale = 1e-3f;  // size of the targets; small targets -> small gradients
  float learning_rate = 1e-2f;
  float beta1 = 0.9f, beta2 = 0.999f, eps = 1e-12f;
  float static_scale = 1024.0f;  // fp16_static: 2^10
  GradScalerConfig dynamic{};    // fp16_dynamic: GradScaler's defaults
  bool poison_targets = false;   // tests: NaN targets make every gradient NaN
  // Targets from the FP64 teacher (O(batch x inputs x hidden) host work, seconds at 4096 wide).
  // false: uniform targets in [-target_scale, target_scale), a regression onto noise with the
  // same step work and gradient sizes, for widths where the host teacher is too slow.
  bool teacher_targets = true;
  std::uint64_t seed = 2018;

  // Throws std::invalid_argument naming the field; the scales go through the scalers'
  // constructors, so a bad scale gets their message.
  void validate() const;
};

// Adam's per-step constants for the t-th step actually taken (t >= 1), formed in double.
AdamConstants adam_constants(const TrainingConfig& cfg, int t);

// The loss scale of a mode: none (1), a StaticLossScaler or a DynamicLossScaler, built from the
// config (so bad scales get the scalers' errors). Without a scaler nothing skips a step: the
// update is applied whatever it holds, as plain training does.
class ModeScaler {
 public:
  ModeScaler(const TrainingConfig& cfg, TrainingMode mode);
  float scale() const;
  // The scaler's update for a step whose unscaled gradients held (or not) an Inf/NaN; returns
  // whether the optimizer step is skipped.
  bool skip(bool found_inf);

 private:
  std::optional<StaticLossScaler> static_;
  std::optional<DynamicLossScaler> dynamic_;
};

struct TrainingStep {
  float loss;        // of the forward pass in this mode's precision, before the update
  float scale_used;  // the loss scale of this step (1 without scaling)
  bool skipped;      // the scaler found Inf/NaN in the unscaled master gradients
  GradientTally tally;
};

struct TrainingRun {
  TrainingMode mode{};
  std::vector<TrainingStep> steps;
  std::optional<std::string> stopped;  // why the run ended early (scale 0 or subnormal)

  float final_loss() const;
  int skipped_steps() const;
  int non_finite_steps() const;  // steps whose stored gradients held an Inf/NaN
  // Percent of all stored gradient elements that were zero only because of underflow.
  double underflow_pct() const;
};

// The training set, targets and initial weights of a config (column-major, see below).
struct RegressionData {
  std::vector<float> x;   // inputs x batch
  std::vector<float> t;   // outputs x batch
  std::vector<float> w1;  // hidden x inputs, initial
  std::vector<float> w2;  // outputs x hidden, initial
};
RegressionData make_regression_data(const TrainingConfig& cfg);

// Runs one mode on the host. Deterministic: same config, same bits.
TrainingRun train_host(const TrainingConfig& cfg, TrainingMode mode);

// The gradients of the FP32 backward pass (dL/dy, dL/dh, dL/dz, dL/dW2, dL/dW1, concatenated)
// at each step in `at_steps` of an FP32 run: real gradients for the landing analysis.
std::vector<float> fp32_backward_gradients(const TrainingConfig& cfg,
                                           std::span<const int> at_steps);

// The message a run stops with when the dynamic scale has decayed to 0 or a subnormal, or
// nullopt while the scale is still usable.
std::optional<std::string> unusable_scale_reason(float scale, int step);

}  // namespace tcbench::studies
