#include "tcbench/studies/int8_mlp.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

#include "tcbench/numerics/quantization.hpp"

namespace tcbench::studies {

std::vector<AbsHistogram> activation_histograms(const Mlp& model, const Dataset& calibration) {
  const std::size_t L = model.layers.size();
  std::vector<std::vector<float>> seen(L), inputs;
  for (std::size_t s = 0; s < calibration.size(); ++s) {
    forward_fp32(model, calibration.row(s), &inputs);
    for (std::size_t l = 0; l < L; ++l)
      seen[l].insert(seen[l].end(), inputs[l].begin(), inputs[l].end());
  }
  std::vector<AbsHistogram> hists;
  for (std::size_t l = 0; l < L; ++l) {
    float top = 0.0f;
    for (float v : seen[l])
      if (is_finite(v)) top = std::max(top, std::fabs(v));
    if (!(top > 0.0f))
      throw std::invalid_argument("activation_histograms: the input of layer " + std::to_string(l) +
                                  " is all zero on the calibration data");
    hists.emplace_back(top);
    hists.back().add(seen[l]);
  }
  return hists;
}

std::vector<float> calibrate_activations(std::span<const AbsHistogram> hists, Calibrator c,
                                         double percentile) {
  std::vector<float> amax;
  for (const AbsHistogram& h : hists)
    amax.push_back(c == Calibrator::percentile ? calibrate_percentile(h, percentile)
                                               : calibrate(h, c));
  return amax;
}

Int8Mlp quantize_mlp(const Mlp& model, std::span<const float> activation_amax) {
  if (activation_amax.size() != model.layers.size())
    throw std::invalid_argument("quantize_mlp: " + std::to_string(activation_amax.size()) +
                                " activation amax values for " +
                                std::to_string(model.layers.size()) + " layers");
  Int8Mlp q;
  for (std::size_t l = 0; l < model.layers.size(); ++l) {
    const DenseLayer& f = model.layers[l];
    Int8DenseLayer il{f.in,
                      f.out,
                      std::vector<std::int8_t>(f.w.size()),
                      per_channel_scales(f.w, f.out, f.in),
                      f.b,
                      int8_scale(activation_amax[l])};
    quantize_per_channel(f.w, f.out, f.in, il.w_scale, il.w);
    q.layers.push_back(std::move(il));
  }
  return q;
}

std::vector<float> forward_int8(const Int8Mlp& model, std::span<const float> x) {
  std::vector<float> cur(x.begin(), x.end());
  std::vector<std::int8_t> xq;
  for (std::size_t li = 0; li < model.layers.size(); ++li) {
    const Int8DenseLayer& l = model.layers[li];
    xq.resize(l.in);
    for (std::size_t i = 0; i < l.in; ++i) xq[i] = quantize_int8(cur[i], l.x_scale);
    std::vector<float> next(l.out);
    for (std::size_t o = 0; o < l.out; ++o) {
      std::int32_t acc = 0;
      for (std::size_t i = 0; i < l.in; ++i)
        acc += static_cast<std::int32_t>(l.w[o * l.in + i]) * static_cast<std::int32_t>(xq[i]);
      const float y = dequantize_accumulator(acc, l.x_scale, l.w_scale[o]) + l.b[o];
      next[o] = (li + 1 < model.layers.size() && y < 0.0f) ? 0.0f : y;
    }
    cur = std::move(next);
  }
  return cur;
}

}  // namespace tcbench::studies
