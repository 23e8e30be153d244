// How the FP8 scaling recipes of fp8_scaling.hpp treat a tensor whose range drifts over training
// steps: delayed scaling casts step t with a scale from the amaxes of steps < t, so a growing
// tensor saturates (clamps to +-fp8_max) and a tensor after a spike underflows until the spike
// leaves the amax history; current scaling uses step t's own amax and does neither.
//
// The tensor at step t is base * amplitude[t]. Everything here runs on the host with the same
// element functions the device kernels use (scaled_cast_fp8 with saturation, as TE casts).
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "tcbench/numerics/fp8_scaling.hpp"

namespace tcbench::numerics {}  // namespace tcbench::numerics

namespace tcbench::studies {

// Studies are loops and data on top of the numerics vocabulary (formats, quantization,
// calibration, scaling rules): its names are this namespace's too.
using namespace tcbench::numerics;

// What one saturating cast with `scale` did to a tensor.
struct CastStats {
  std::size_t elements = 0;
  std::size_t saturated = 0;   // finite x whose unsaturated cast would overflow: clamped
  std::size_t flushed = 0;     // finite nonzero x that became 0
  std::size_t subnormal = 0;   // finite x that landed on a nonzero subnormal
  std::size_t not_finite = 0;  // NaN or Inf inputs (NaN stays NaN; Inf saturates to max)
  double rel_error = 0;  // ||dequantized - x||_F / ||x||_F over the finite inputs (0 if all 0)
  double overshoot = 0;  // amax * scale / fp8_max over the finite inputs: > 1 means saturation
  double saturated_fraction() const {
    return elements == 0 ? 0.0 : static_cast<double>(saturated) / static_cast<double>(elements);
  }
  double flushed_fraction() const {
    return elements == 0 ? 0.0 : static_cast<double>(flushed) / static_cast<double>(elements);
  }
};
CastStats cast_stats(std::span<const float> xs, float scale, Fp8Format f);

struct DriftStep {
  float amplitude = 1;
  float amax = 0;
  float delayed_scale = 1;  // the scale the delayed recipe cast this step with
  CastStats delayed;
  float current_scale = 1;
  CastStats current;
};

// Runs both recipes over amplitude.size() steps: delayed with `cfg` (initial scale 1, TE's),
// current with TE's defaults (no epsilon, no power-of-two truncation). `role` picks the format
// under HYBRID.
std::vector<DriftStep> simulate_drift(std::span<const float> base, std::span<const float> amplitude,
                                      const DelayedScalingConfig& cfg,
                                      TensorRole role = TensorRole::forward);

struct DriftSummary {
  int steps = 0;
  int saturated_steps = 0;  // delayed: steps with at least one saturated element
  int first_saturated_step = -1;
  double worst_saturated_fraction = 0;
  double worst_overshoot = 0;
  int underflow_steps = 0;  // delayed: steps flushing more elements than current scaling does
  double delayed_mean_error = 0, delayed_worst_error = 0;
  double current_mean_error = 0, current_worst_error = 0;
};
// Step 0 is left out: both recipes start there from nothing (delayed from scale 1).
DriftSummary summarize(std::span<const DriftStep> steps);

// Amplitude schedules: factor^t; 1 everywhere except `height` at step `at`.
std::vector<float> geometric_amplitudes(int steps, float factor);
std::vector<float> spike_amplitudes(int steps, int at, float height);

// An evenly spaced grid of n values over (-1, 1): its |x| is uniform, so fractions are exact up
// to 1/n. The base tensor of the drift table.
std::vector<float> uniform_grid(int n);

// The drift table of docs/concepts/fp8-scaling.md: five ranges over training and five delayed
// scaling configurations (amax history length, margin), each run against current scaling.
struct DriftScenario {
  std::string label;  // "growth 1.05x/step"
  std::string slug;   // "growth_1.05x": a benchmark-name component
  std::vector<float> amplitude;
};
std::vector<DriftScenario> drift_scenarios();
struct DriftConfig {
  int history, margin;
};
inline constexpr DriftConfig kDriftConfigs[] = {{1, 0}, {16, 0}, {1024, 0}, {16, 1}, {16, 2}};

}  // namespace tcbench::studies
