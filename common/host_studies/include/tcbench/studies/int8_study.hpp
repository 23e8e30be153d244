// The INT8 topic's end-to-end story on the host, in one call: a deterministic data set with
// activation outliers, an MLP trained in FP32, PTQ with each calibrator (per-tensor activations,
// per-channel max weights), QAT fine-tuning from the FP32 weights, and every variant evaluated
// with the integer-exact INT8 forward pass (int8_mlp.hpp), beside FP16 and BF16 rounding: accuracy
// on the held-out split and top-1 agreement with the FP32 model. The test asserts its qualitative
// facts; the concept page and bench_int8_gemm print its table.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "tcbench/studies/int8_mlp.hpp"
#include "tcbench/studies/mlp.hpp"

namespace tcbench::numerics {}  // namespace tcbench::numerics

namespace tcbench::studies {

// Studies are loops and data on top of the numerics vocabulary (formats, quantization,
// calibration, scaling rules): its names are this namespace's too.
using namespace tcbench::numerics;

// QAT fine-tunes briefly at a small learning rate from the trained FP32 weights.
inline TrainOptions qat_defaults() {
  TrainOptions t;
  t.epochs = 2;
  t.learning_rate = 0.01f;
  return t;
}

struct Int8StudyOptions {
  OutlierDataSpec data;
  std::vector<std::size_t> widths{64, 128, 128, 16};  // multiples of 16
  // 4096 calibration samples hold about 16 spikes (4 channels x 0.1 %): a max calibrator always
  // sees one, and a p99.99 one (26 values of 262144) always clips them.
  std::size_t train_samples = 4096, calibration_samples = 4096, test_samples = 4096;
  TrainOptions fp32_training;
  TrainOptions qat_training = qat_defaults();
  // "A badly chosen amax" (variant ptq_bad_clip): this fraction of the p99.99 amax. A fraction of
  // the max would not do: on outlier data 10 % of the max can still be a fine amax.
  float bad_clip_fraction = 0.25f;
  // The calibration QAT starts from and keeps fixed while it fine-tunes.
  Calibrator qat_calibrator = Calibrator::percentile;
  double qat_percentile = 99.99;
  std::uint64_t model_seed = 3;
};

struct Int8Variant {
  std::string name;    // "fp32", "fp16", "bf16", "ptq_max", "ptq_p99.9", ..., "qat"
  std::string method;  // "fp32", "float" (fp16/bf16 inputs, FP32 accumulate), "ptq" or "qat"
  std::vector<float> activation_amax;  // per layer input (empty for fp32)
  double accuracy = 0.0;               // on the held-out split
  double agreement = 0.0;              // top-1 agreement with the FP32 model
};

struct Int8StudyResult {
  std::vector<std::size_t> widths;
  std::size_t test_samples = 0;
  std::vector<Int8Variant> variants;  // fp32 first
  const Int8Variant& get(const std::string& name) const;
};

Int8StudyResult run_int8_study(const Int8StudyOptions& opt = {});

// The result as a Markdown table (variant, activation amax per layer, accuracy, agreement).
std::string format_int8_table(const Int8StudyResult& r);

}  // namespace tcbench::studies
