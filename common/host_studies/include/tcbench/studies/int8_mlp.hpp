// INT8 deployment of an Mlp (mlp.hpp), emulated exactly on the host: activations quantized per
// tensor with a calibrated amax, weights per output channel with their max, int8 x int8 products
// accumulated in int32 (exact, as IMMA does), then dequantize_accumulator and the FP32 bias. This
// is the arithmetic an IMMA GEMM with a dequantizing epilogue performs, so its accuracy is the
// deployed model's accuracy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "tcbench/numerics/calibration.hpp"
#include "tcbench/studies/mlp.hpp"

namespace tcbench::numerics {}  // namespace tcbench::numerics

namespace tcbench::studies {

// Studies are loops and data on top of the numerics vocabulary (formats, quantization,
// calibration, scaling rules): its names are this namespace's too.
using namespace tcbench::numerics;

struct Int8DenseLayer {
  std::size_t in = 0, out = 0;
  std::vector<std::int8_t> w;  // row-major [out, in]
  std::vector<float> w_scale;  // per output channel
  std::vector<float> b;
  float x_scale = 0.0f;  // per-tensor scale of this layer's input
};

struct Int8Mlp {
  std::vector<Int8DenseLayer> layers;
};

// One |x| histogram per layer input over the calibration data (range = that input's max).
std::vector<AbsHistogram> activation_histograms(const Mlp& model, const Dataset& calibration);

// One amax per layer input from the histograms, with the given calibrator.
std::vector<float> calibrate_activations(std::span<const AbsHistogram> hists, Calibrator c,
                                         double percentile = 99.99);

Int8Mlp quantize_mlp(const Mlp& model, std::span<const float> activation_amax);

// Integer-exact INT8 forward pass of one sample; returns the logits.
std::vector<float> forward_int8(const Int8Mlp& model, std::span<const float> x);

}  // namespace tcbench::studies
