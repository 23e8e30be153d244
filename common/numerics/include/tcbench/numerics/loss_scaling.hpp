// Loss scaling for FP16 training: a static scaler, a dynamic scaler with PyTorch GradScaler's
// exact update rule, the element-wise check-and-unscale a kernel applies to every gradient, and
// an analysis of where scaled gradients land in FP16 and BF16.
//
// Sources: pytorch/pytorch torch/amp/grad_scaler.py (defaults init 2^16, growth 2.0, backoff
// 0.5, interval 2000; inv_scale = 1/scale computed in double), aten/src/ATen/native/cuda/
// AmpKernels.cu (amp_update_scale_cuda_kernel: backoff and reset on inf/NaN, growth after
// `interval` consecutive clean steps, never grow to inf;
// _amp_foreach_non_finite_check_and_unscale_); Micikevicius et al., "Mixed Precision Training",
// ICLR 2018, arXiv:1710.03740.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include <cuda_fp16.h>

#include "tcbench/numerics/formats.hpp"
#include "tcbench/numerics/host_device.hpp"

namespace tcbench::numerics {

// Multiplies one gradient by inv_scale and raises found_inf (never clears it) when the gradient
// is Inf or NaN: the per-element body of PyTorch's _amp_foreach_non_finite_check_and_unscale_.
TCB_HD inline float check_and_unscale(float g, float inv_scale, bool& found_inf) {
  if (!is_finite(g)) found_inf = true;
  return g * inv_scale;
}

// FP16 gradients are unscaled in FP32 (PyTorch's opmath) and rounded back once.
TCB_HD inline __half check_and_unscale(__half g, float inv_scale, bool& found_inf) {
  return __float2half_rn(check_and_unscale(__half2float(g), inv_scale, found_inf));
}

// 1/scale evaluated in double and rounded to float, as GradScaler.unscale_ does.
float inverse_scale(float scale);

// Whether the optimizer step ran, and the scale before and after the update.
struct ScalerStep {
  float scale_used;   // the scale the loss was multiplied by this step
  bool found_inf;     // some gradient was Inf/NaN after scaling
  bool skipped;       // optimizer.step() was skipped
  float scale_after;  // the scale for the next step
};

class StaticLossScaler {
 public:
  explicit StaticLossScaler(float scale);
  float scale() const { return scale_; }
  float inv_scale() const { return inverse_scale(scale_); }
  // A fixed scale never adapts; an overflowing step is still skipped rather than applied.
  ScalerStep update(bool found_inf);

 private:
  float scale_;
};

struct GradScalerConfig {
  float init_scale = 65536.0f;  // 2^16
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int growth_interval = 2000;
};

class DynamicLossScaler {
 public:
  // Throws std::invalid_argument unless init_scale > 0 and finite, growth_factor > 1,
  // 0 < backoff_factor < 1 and growth_interval >= 1 (GradScaler asserts the middle two).
  explicit DynamicLossScaler(GradScalerConfig cfg = {});

  float scale() const { return scale_; }
  float inv_scale() const { return inverse_scale(scale_); }
  int growth_tracker() const { return growth_tracker_; }
  const GradScalerConfig& config() const { return cfg_; }

  // GradScaler.step + update for one iteration whose unscale found (or not) an Inf/NaN.
  ScalerStep update(bool found_inf);
  const std::vector<ScalerStep>& history() const { return history_; }

 private:
  GradScalerConfig cfg_;
  float scale_;
  int growth_tracker_ = 0;
  std::vector<ScalerStep> history_;
};

// Where gradient g lands in format f when the loss was multiplied by `scale`: g * scale is formed
// in FP32 (the chain rule carries the scale into every gradient) and then rounded to f. A finite
// gradient whose scaled value leaves even FP32 overflows every narrower format.
TCB_HD inline Landing landing_after_scaling(float g, float scale, Format f) {
  const float s = g * scale;
  if (is_finite(g) && !is_finite(s)) return Landing::overflow;
  return classify(s, f);
}

// How many of `grads` land in each class (indexed by Landing) after scaling by `scale`: the host
// reference the GPU classify-and-count kernel must match exactly.
using LandingCounts = std::array<std::uint64_t, kLandingCount>;
LandingCounts count_landings(std::span<const float> grads, float scale, Format f);

// The scales the loss-scaling topic sweeps: 2^0, 2^4, ..., 2^24 (GradScaler's default is 2^16).
inline constexpr std::array<int, 7> kSweepScaleLog2 = {0, 4, 8, 12, 16, 20, 24};

// A log-normal gradient model: |g| = 10^x with x ~ N(mean_log10, sd_log10), random sign, drawn
// from tcbench's one random source (numerics/random.hpp: the same values on every platform). The
// defaults put +-3 standard deviations at 1e-10 and 1e-1, the spread of gradient magnitudes
// Micikevicius et al. (arXiv:1710.03740, Fig. 3) show for activation gradients.
std::vector<float> lognormal_gradients(std::size_t count, std::uint64_t seed,
                                       double mean_log10 = -5.5, double sd_log10 = 1.5);

// Fractions (of all values) landing in each class of `Landing` after multiplying by `scale`.
struct LandingFractions {
  double zero = 0;  // the gradient was exactly 0 to begin with
  double normal = 0;
  double subnormal = 0;
  double flushed_to_zero = 0;  // nonzero gradient lost to underflow
  double overflow = 0;         // became Inf: the step would be skipped
  double not_finite = 0;       // the gradient (times scale, in FP32) was already Inf/NaN
};

struct GradientRangeReport {
  std::size_t count = 0;
  float scale = 1.0f;
  LandingFractions fp16;
  LandingFractions bf16;
};

// Where g * scale (computed in FP32, as scaling the loss does to every gradient) lands in FP16
// and in BF16.
GradientRangeReport analyze_gradient_range(std::span<const float> grads, float scale);

}  // namespace tcbench::numerics
