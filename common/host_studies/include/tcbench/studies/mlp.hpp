// A small MLP classifier trained on the host in FP32, on a synthetic data set with activation
// outliers: the model the INT8 topic calibrates (PTQ), fine-tunes with fake quantization (QAT)
// and deploys in integer-exact INT8 (int8_mlp.hpp). Everything is deterministic: the data come
// from a counter-based generator with a fixed seed (no std:: distributions, whose output differs
// between standard libraries), training is single-threaded in a fixed order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace tcbench::numerics {}  // namespace tcbench::numerics

namespace tcbench::studies {

// Studies are loops and data on top of the numerics vocabulary (formats, quantization,
// calibration, scaling rules): its names are this namespace's too.
using namespace tcbench::numerics;

// Gaussian class clusters in `features` dimensions, plus `outlier_channels` channels that carry
// no class information but rare, huge spikes (probability spike_rate per value, magnitude
// spike_min..spike_max): the "activation outliers" that ruin a max-calibrated per-tensor scale.
// Spikes are 4 / 64 x 0.1 % = 0.00625 % of the values, fewer than the 0.01 % a p99.99 calibrator
// clips: at 0.2 % (0.0125 %, more than it clips) p99.99 landed among the spikes on most seeds, and
// the study's verdict depended on its seed.
struct OutlierDataSpec {
  std::size_t features = 64;
  std::size_t classes = 16;
  std::size_t outlier_channels = 4;
  float centroid_spread = 0.55f;  // std of the class centroids; the noise std is 1
  float spike_rate = 0.001f;
  float spike_min = 60.0f, spike_max = 120.0f;
  std::uint64_t seed = 0x7cbe4c8ull;  // fixes the centroids (the task)
};

struct Dataset {
  std::size_t features = 0, classes = 0;
  std::vector<float> x;  // row-major [samples, features]
  std::vector<int> y;    // class of each sample
  std::size_t size() const { return y.size(); }
  std::span<const float> row(std::size_t i) const { return {x.data() + i * features, features}; }
};

// `samples` draws of the task `spec` describes; split_seed separates train/calibration/test.
Dataset make_outlier_dataset(const OutlierDataSpec& spec, std::uint64_t split_seed,
                             std::size_t samples);

// y = W x + b with W row-major [out, in] (rows = output channels, as a per-channel weight
// quantizer and the TN INT8 GEMM want them).
struct DenseLayer {
  std::size_t in = 0, out = 0;
  std::vector<float> w, b;
};

// ReLU after every layer but the last, whose outputs are the class logits.
struct Mlp {
  std::vector<DenseLayer> layers;
  std::size_t inputs() const { return layers.front().in; }
  std::size_t outputs() const { return layers.back().out; }
};

// He-initialized layers of the given widths (widths.front() = inputs, back() = classes).
Mlp make_mlp(std::span<const std::size_t> widths, std::uint64_t seed);

// What a training step quantizes. Empty activation_amax = plain FP32 training. For QAT, one
// per-tensor amax per layer input (fixed, from calibration) and per-channel max weights, both
// fake-quantized in the forward pass with the clipped straight-through estimator backward.
struct FakeQuant {
  std::vector<float> activation_amax;
  bool active() const { return !activation_amax.empty(); }
};

struct TrainOptions {
  int epochs = 8;
  std::size_t batch = 64;
  float learning_rate = 0.05f;
  float momentum = 0.9f;
  std::uint64_t shuffle_seed = 17;
  FakeQuant fake_quant;
};

// Minibatch SGD with momentum on softmax cross-entropy; the learning rate decays linearly to 0.
// Returns the mean training loss of the last epoch.
double train(Mlp& model, const Dataset& data, const TrainOptions& opt);

// FP32 forward pass of one sample; `inputs_of_layer` (optional) receives each layer's input.
std::vector<float> forward_fp32(const Mlp& model, std::span<const float> x,
                                std::vector<std::vector<float>>* inputs_of_layer = nullptr);

int argmax(std::span<const float> logits);

}  // namespace tcbench::studies
