#include "tcbench/studies/fp8_drift.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace tcbench::studies {

CastStats cast_stats(std::span<const float> xs, float scale, Fp8Format f) {
  CastStats s;
  s.elements = xs.size();
  const double max = fp8_max(f);
  const float min_normal = limits(f).min_normal;
  double err2 = 0, ref2 = 0, amax_finite = 0;
  for (float x : xs) {
    if (!is_finite(x)) {
      ++s.not_finite;
      continue;
    }
    const float q = fp8_to_float(scaled_cast_fp8(x, scale, f), f);
    // Saturated: the cast without saturation would overflow (E4M3 above 464, the midpoint past
    // 448; E5M2 above 61440), so satfinite clamped it. Values that merely round down to max are
    // ordinary rounding.
    if (!is_finite(fp8_to_float(scaled_cast_fp8(x, scale, f, Saturation::none), f))) ++s.saturated;
    if (x != 0.0f && q == 0.0f) ++s.flushed;
    if (q != 0.0f && fabsf(q) < min_normal) ++s.subnormal;
    // Dequantize in double so the error measured is the cast's alone.
    const double d = static_cast<double>(q) / static_cast<double>(scale) - static_cast<double>(x);
    err2 += d * d;
    ref2 += static_cast<double>(x) * static_cast<double>(x);
    amax_finite = std::max(amax_finite, std::fabs(static_cast<double>(x)));
  }
  s.rel_error = ref2 > 0 ? std::sqrt(err2 / ref2) : 0.0;
  s.overshoot = amax_finite * static_cast<double>(scale) / max;
  return s;
}

std::vector<DriftStep> simulate_drift(std::span<const float> base, std::span<const float> amplitude,
                                      const DelayedScalingConfig& cfg, TensorRole role) {
  DelayedScaler delayed(cfg, role);
  const Fp8Format f = delayed.format();
  std::vector<DriftStep> out;
  out.reserve(amplitude.size());
  std::vector<float> xs(base.size());
  for (float amp : amplitude) {
    std::transform(base.begin(), base.end(), xs.begin(), [amp](float b) { return b * amp; });
    DriftStep st;
    st.amplitude = amp;
    st.amax = amax(xs);
    // Delayed: cast with the scale from earlier steps while recording this step's amax (the
    // one-pass kernel), then update the scale for the next step.
    st.delayed_scale = delayed.scale();
    st.delayed = cast_stats(xs, st.delayed_scale, f);
    delayed.record_amax(st.amax);
    delayed.update();
    // Current: amax first, then the cast with the scale from it (two passes).
    st.current_scale = current_scaling(xs, f).scale;
    st.current = cast_stats(xs, st.current_scale, f);
    out.push_back(st);
  }
  return out;
}

DriftSummary summarize(std::span<const DriftStep> steps) {
  DriftSummary s;
  s.steps = static_cast<int>(steps.size());
  int counted = 0;
  for (std::size_t t = 1; t < steps.size(); ++t) {
    const DriftStep& st = steps[t];
    ++counted;
    if (st.delayed.saturated > 0) {
      ++s.saturated_steps;
      if (s.first_saturated_step < 0) s.first_saturated_step = static_cast<int>(t);
    }
    s.worst_saturated_fraction =
        std::max(s.worst_saturated_fraction, st.delayed.saturated_fraction());
    s.worst_overshoot = std::max(s.worst_overshoot, st.delayed.overshoot);
    if (st.delayed.flushed > st.current.flushed) ++s.underflow_steps;
    s.delayed_mean_error += st.delayed.rel_error;
    s.current_mean_error += st.current.rel_error;
    s.delayed_worst_error = std::max(s.delayed_worst_error, st.delayed.rel_error);
    s.current_worst_error = std::max(s.current_worst_error, st.current.rel_error);
  }
  if (counted > 0) {
    s.delayed_mean_error /= counted;
    s.current_mean_error /= counted;
  }
  return s;
}

std::vector<float> geometric_amplitudes(int steps, float factor) {
  if (steps < 0 || !(factor > 0.0f) || !is_finite(factor))
    throw std::invalid_argument(
        "geometric_amplitudes: need steps >= 0 and a positive finite "
        "factor; got steps=" +
        std::to_string(steps) + " factor=" + std::to_string(factor));
  std::vector<float> a(static_cast<std::size_t>(steps));
  for (int t = 0; t < steps; ++t) a[static_cast<std::size_t>(t)] = std::pow(factor, float(t));
  return a;
}

std::vector<float> spike_amplitudes(int steps, int at, float height) {
  if (steps < 0 || at < 0 || at >= steps || !(height > 0.0f) || !is_finite(height))
    throw std::invalid_argument(
        "spike_amplitudes: need 0 <= at < steps and a positive finite "
        "height; got steps=" +
        std::to_string(steps) + " at=" + std::to_string(at) + " height=" + std::to_string(height));
  std::vector<float> a(static_cast<std::size_t>(steps), 1.0f);
  a[static_cast<std::size_t>(at)] = height;
  return a;
}

std::vector<float> uniform_grid(int n) {
  if (n <= 0) throw std::invalid_argument("uniform_grid: n = " + std::to_string(n));
  std::vector<float> b(static_cast<std::size_t>(n));
  for (int i = 0; i < n; ++i)
    b[static_cast<std::size_t>(i)] =
        -1.0f + (2.0f * static_cast<float>(i) + 1.0f) / static_cast<float>(n);
  return b;
}

std::vector<DriftScenario> drift_scenarios() {
  return {{"growth 1.05x/step", "growth_1.05x", geometric_amplitudes(64, 1.05f)},
          {"growth 1.5x/step", "growth_1.5x", geometric_amplitudes(64, 1.5f)},
          {"growth 4x/step", "growth_4x", geometric_amplitudes(32, 4.0f)},
          {"spike 16x at step 8", "spike_16x", spike_amplitudes(64, 8, 16.0f)},
          {"spike 4096x at step 8", "spike_4096x", spike_amplitudes(64, 8, 4096.0f)}};
}

}  // namespace tcbench::studies
