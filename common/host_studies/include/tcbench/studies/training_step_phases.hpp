// One mixed-precision training step as phases: what each phase computes and moves, how a step's
// time divides among them, and the arithmetic that turns per-phase tensor-pipe utilization into
// the step's (bench_tensor_util's train_step rows, docs/concepts/tensor-util.md "whole step").
//
// The phases are those of the GPU trainer (common/gpu_studies/src/gpu_training.cpp):
//   forward    weight cast, Z = W1 X, tanh, Y = a W2 H, loss and its scaled gradient dY
//   backward   dW2 = a dY H^T, dH = a W2^T dY, tanh', dW1 = dZ X^T, and the gradient stores
//   unscale    the fused check-and-unscale of the FP32 master gradients (and the Inf/NaN flag)
//   optimizer  Adam on the FP32 masters
// Host code, no GPU: the bookkeeping the topic applies to its measurements and the model the
// concept page predicts with are both tested on the CPU (tests/host/studies).
#pragma once

#include "tcbench/numerics/enum_names.hpp"
#include "tcbench/studies/mixed_precision_training.hpp"

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

namespace tcbench::studies {

enum class StepPhase : std::uint8_t { forward, backward, unscale, optimizer };
inline constexpr std::size_t kPhaseCount = 4;
inline constexpr std::array<StepPhase, kPhaseCount> kStepPhases = {
    StepPhase::forward, StepPhase::backward, StepPhase::unscale, StepPhase::optimizer};
inline constexpr numerics::EnumName<StepPhase> kStepPhaseNames[] = {
    {StepPhase::forward, "forward"},
    {StepPhase::backward, "backward"},
    {StepPhase::unscale, "unscale"},
    {StepPhase::optimizer, "optimizer"}};
static_assert(numerics::names_every_enumerator(kStepPhaseNames, StepPhase::optimizer));
constexpr std::string_view name(StepPhase p) {
  return numerics::name_in(kStepPhaseNames, p);
}
constexpr std::size_t index(StepPhase p) {
  return static_cast<std::size_t>(p);
}
// Forward and backward launch the step's GEMMs; unscale and the optimizer are element-wise.
constexpr bool has_gemms(StepPhase p) {
  return p == StepPhase::forward || p == StepPhase::backward;
}

template <typename T>
using PerPhase = std::array<T, kPhaseCount>;

// What the time between phases is called where phases are named (the counter time_pct_gaps).
inline constexpr std::string_view kGapsName = "gaps";

// The two widths of the train_step rows: the loss-scaling topic's small MLP (TrainingConfig's
// defaults: 32 -> 64 -> 8, batch 256) and a transformer-block-sized square one (width -> width
// -> width over `tokens` tokens), with uniform targets (no host teacher at that size) of size 1
// so that FP16's scaled gradients (2^16 x 2 (y - t) / (width x tokens)) stay normal.
TrainingConfig small_mlp_config();
TrainingConfig block_sized_config(int width, int tokens);

// ---------------------------------------------------------------------------------------------
// Bookkeeping: where a step's time goes

// A span of one clock (seconds; only differences matter).
struct Interval {
  double begin = 0, end = 0;
};
// One measured step: its own span and each phase's, in phase order, inside it.
struct StepTimeline {
  Interval step;
  PerPhase<Interval> phases{};
};

struct PhaseShares {
  std::size_t steps = 0;
  double step_seconds = 0;     // mean over the steps
  PerPhase<double> seconds{};  // mean time of each phase
  PerPhase<double> pct{};      // each phase's share of the steps' total time, %
  double gaps_pct = 0;         // the share outside every phase (between phases), %
};

// Totals over `steps` (the shares are ratios of sums, so a slow step weighs by its time).
// Throws std::invalid_argument, naming the step and phase, for no steps, a non-finite time, a phase
// that ends before it begins, overlaps the next or lies outside its step.
PhaseShares phase_shares(std::span<const StepTimeline> steps);

// The time-weighted mean of per-phase values (tensor-pipe % of each phase): sum of
// share x value / 100, the time between phases counting as 0 (no tensor work there). Throws
// std::invalid_argument for a value that is not a percentage of 0..200 (the counter's range).
double time_weighted_mix(const PhaseShares& shares, const PerPhase<double>& pct);
// The same mean over the GEMM phases alone: the step's value if unscale, the optimizer and the
// gaps took no time (the ceiling the GEMMs set). Throws std::invalid_argument when the GEMM phases
// took no time.
double gemm_phases_ceiling(const PhaseShares& shares, const PerPhase<double>& pct);

// ---------------------------------------------------------------------------------------------
// Work: what each kernel of a step computes and moves (the model)

struct KernelWork {
  StepPhase phase;
  std::string_view name;  // "fwd1 Z = W1 X", "adam", ...
  bool gemm;
  double flops;  // useful FLOP (GEMMs: 2 m n k; element-wise kernels: 0)
  double bytes;  // every input read once, every output written once
};

// The kernels of one step in launch order, for storage of `storage_bytes` per element (2 for
// FP16/BF16, 4 for FP32/TF32): five GEMMs, the element-wise kernels around them, the unscale
// and Adam over the FP32 masters. Throws std::invalid_argument for a bad config or element size.
std::vector<KernelWork> step_kernels(const TrainingConfig& cfg, std::size_t storage_bytes);

// Useful FLOP of one step: its five GEMMs (the first layer's data gradient is not computed).
double step_gemm_flops(const TrainingConfig& cfg);

struct PhaseWork {
  int gemms = 0, other_kernels = 0;
  double gemm_flops = 0, gemm_bytes = 0, other_bytes = 0;
};
PerPhase<PhaseWork> phase_work(std::span<const KernelWork> kernels);

// ---------------------------------------------------------------------------------------------
// Prediction: every kernel at its roofline with the datasheet rates

struct StepRates {
  double gemm_flops_per_s = 0;  // the GEMMs' dense peak for the step's precision
  bool tensor_path = true;      // false: FFMA GEMMs (FP32), which leave the tensor pipe idle
  double bytes_per_s = 0;       // DRAM bandwidth
};

struct StepPrediction {
  PerPhase<double> seconds{};     // each phase: its kernels' roofline times, back to back
  PerPhase<double> tensor_pct{};  // GEMM time at the peak / phase time (0 on the FFMA path)
  PhaseShares shares;
  double step_seconds = 0;
  double step_tensor_pct = 0;  // time_weighted_mix of the phases
  double ceiling_pct = 0;      // gemm_phases_ceiling
  double flops_per_s = 0;      // step_gemm_flops / step_seconds
};

// Each GEMM takes max(FLOP / peak, bytes / bandwidth) and keeps the tensor pipe busy for
// FLOP / peak of it; each element-wise kernel takes bytes / bandwidth. Launch latency, host
// synchronization and cache reuse are left out (they decide the small MLP, whose kernels are far
// below a launch's cost). Throws std::invalid_argument for rates that are not positive.
StepPrediction predict_step(std::span<const KernelWork> kernels, const StepRates& rates);

}  // namespace tcbench::studies
