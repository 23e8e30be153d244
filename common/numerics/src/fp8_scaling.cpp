#include "tcbench/numerics/fp8_scaling.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace tcbench::numerics {

DelayedScaler::DelayedScaler(DelayedScalingConfig cfg, TensorRole role)
    : cfg_(cfg), format_(fp8_format_for(cfg.format, role)) {
  if (cfg.amax_history_len < 1)
    throw std::invalid_argument("DelayedScaler: amax_history_len must be >= 1, got " +
                                std::to_string(cfg.amax_history_len));
  if (cfg.margin < 0)
    throw std::invalid_argument("DelayedScaler: margin must be >= 0, got " +
                                std::to_string(cfg.margin));
  if (cfg.format == RecipeFormat::e5m2)
    throw std::invalid_argument("DelayedScaler: pure E5M2 training is not supported (use HYBRID)");
  history_.assign(static_cast<std::size_t>(cfg.amax_history_len), 0.0f);
}

void DelayedScaler::record_amax(float amax) {
  history_[0] = amax_step(history_[0], amax);
}

float DelayedScaler::update() {
  float amax = history_[0];
  if (cfg_.amax_compute == AmaxReduction::max)
    for (float a : history_) amax = amax_step(amax, a);
  scale_ = delayed_scale_from_amax(amax, fp8_max(), cfg_.margin, scale_);
  std::rotate(history_.begin(), history_.begin() + 1, history_.end());
  history_[0] = 0.0f;
  return scale_;
}

CurrentScaled current_scaling(std::span<const float> xs, Fp8Format f, float amax_epsilon,
                              bool power_of_2) {
  const float a = amax(xs);
  const float s = current_scale_from_amax(a, numerics::fp8_max(f), amax_epsilon, power_of_2);
  return CurrentScaled{a, s, 1.0f / s};
}

void cast_to_fp8(std::span<const float> xs, float scale, Fp8Format f,
                 std::span<__nv_fp8_storage_t> out, Saturation sat) {
  if (out.size() != xs.size())
    throw std::invalid_argument("cast_to_fp8: output size " + std::to_string(out.size()) +
                                ", input size " + std::to_string(xs.size()));
  for (std::size_t i = 0; i < xs.size(); ++i) out[i] = scaled_cast_fp8(xs[i], scale, f, sat);
}

}  // namespace tcbench::numerics
