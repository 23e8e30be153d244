#include "tcbench/numerics/loss_scaling.hpp"

#include "tcbench/numerics/random.hpp"

#include <array>
#include <cmath>
#include <stdexcept>
#include <string>

namespace tcbench::numerics {

float inverse_scale(float scale) {
  return static_cast<float>(1.0 / static_cast<double>(scale));
}

StaticLossScaler::StaticLossScaler(float scale) : scale_(scale) {
  if (!(scale > 0.0f) || !is_finite(scale))
    throw std::invalid_argument("StaticLossScaler: scale must be positive and finite, got " +
                                std::to_string(scale));
}

ScalerStep StaticLossScaler::update(bool found_inf) {
  return ScalerStep{scale_, found_inf, found_inf, scale_};
}

DynamicLossScaler::DynamicLossScaler(GradScalerConfig cfg) : cfg_(cfg), scale_(cfg.init_scale) {
  if (!(cfg.init_scale > 0.0f) || !is_finite(cfg.init_scale))
    throw std::invalid_argument("DynamicLossScaler: init_scale must be positive and finite, got " +
                                std::to_string(cfg.init_scale));
  if (!(cfg.growth_factor > 1.0))
    throw std::invalid_argument("DynamicLossScaler: growth_factor must be > 1, got " +
                                std::to_string(cfg.growth_factor));
  if (!(cfg.backoff_factor > 0.0 && cfg.backoff_factor < 1.0))
    throw std::invalid_argument("DynamicLossScaler: backoff_factor must be in (0, 1), got " +
                                std::to_string(cfg.backoff_factor));
  if (cfg.growth_interval < 1)
    throw std::invalid_argument("DynamicLossScaler: growth_interval must be >= 1, got " +
                                std::to_string(cfg.growth_interval));
}

// Mirrors amp_update_scale_cuda_kernel: the products are formed in double (the factors are
// doubles there too) and stored as float; a growth that would reach Inf is dropped but still
// resets the tracker.
ScalerStep DynamicLossScaler::update(bool found_inf) {
  const float used = scale_;
  if (found_inf) {
    scale_ = static_cast<float>(static_cast<double>(scale_) * cfg_.backoff_factor);
    growth_tracker_ = 0;
  } else {
    const int successful = growth_tracker_ + 1;
    if (successful == cfg_.growth_interval) {
      const auto grown = static_cast<float>(static_cast<double>(scale_) * cfg_.growth_factor);
      if (is_finite(grown)) scale_ = grown;
      growth_tracker_ = 0;
    } else {
      growth_tracker_ = successful;
    }
  }
  history_.push_back(ScalerStep{used, found_inf, found_inf, scale_});
  return history_.back();
}

LandingCounts count_landings(std::span<const float> grads, float scale, Format f) {
  LandingCounts c{};
  for (float g : grads) ++c[static_cast<std::size_t>(landing_after_scaling(g, scale, f))];
  return c;
}

std::vector<float> lognormal_gradients(std::size_t count, std::uint64_t seed, double mean_log10,
                                       double sd_log10) {
  RandomStream rng(seed);
  std::vector<float> g(count);
  for (std::size_t i = 0; i < count; ++i) {
    const double z = rng.normal();
    const double magnitude = std::pow(10.0, mean_log10 + sd_log10 * z);
    g[i] = static_cast<float>(rng.uniform() < 0.5f ? magnitude : -magnitude);
  }
  return g;
}

GradientRangeReport analyze_gradient_range(std::span<const float> grads, float scale) {
  GradientRangeReport r;
  r.count = grads.size();
  r.scale = scale;
  if (grads.empty()) return r;
  const auto n = static_cast<double>(grads.size());
  auto fill = [n](const LandingCounts& c) {
    auto at = [&](Landing l) { return static_cast<double>(c[static_cast<std::size_t>(l)]) / n; };
    LandingFractions f;
    f.zero = at(Landing::zero);
    f.normal = at(Landing::normal);
    f.subnormal = at(Landing::subnormal);
    f.flushed_to_zero = at(Landing::flushed_to_zero);
    f.overflow = at(Landing::overflow);
    f.not_finite = at(Landing::not_finite);
    return f;
  };
  r.fp16 = fill(count_landings(grads, scale, Format::fp16));
  r.bf16 = fill(count_landings(grads, scale, Format::bf16));
  return r;
}

}  // namespace tcbench::numerics
