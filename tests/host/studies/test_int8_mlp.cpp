// The INT8 end-to-end story on the host: data set, FP32 MLP, PTQ per calibrator, QAT, and the
// integer-exact INT8 forward pass. The study's assertions are the qualitative facts that must
// hold and that a broken calibrator, quantizer or STE would break. It also prints the table the
// concept page quotes (docs/concepts/int8-calibration.md):
//   build/dev/bin/numerics_test_int8_mlp --gtest_filter='Int8Study.*'
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "tcbench/studies/int8_mlp.hpp"
#include "tcbench/studies/int8_study.hpp"
#include "tcbench/studies/mlp.hpp"
#include "tcbench/numerics/quantization.hpp"

namespace tn = tcbench::studies;

namespace {

TEST(OutlierDataset, DeterministicWithRareSpikesOnlyInOutlierChannels) {
  const tn::OutlierDataSpec spec;
  const tn::Dataset a = tn::make_outlier_dataset(spec, 1, 4096);
  const tn::Dataset b = tn::make_outlier_dataset(spec, 1, 4096);
  const tn::Dataset c = tn::make_outlier_dataset(spec, 2, 4096);
  EXPECT_EQ(a.x, b.x);
  EXPECT_EQ(a.y, b.y);
  EXPECT_NE(a.x, c.x);
  const std::size_t informative = spec.features - spec.outlier_channels;
  std::size_t spikes = 0, outlier_values = 0;
  float informative_max = 0.0f;
  std::vector<std::size_t> per_class(spec.classes, 0);
  for (std::size_t s = 0; s < a.size(); ++s) {
    ++per_class[static_cast<std::size_t>(a.y[s])];
    for (std::size_t f = 0; f < spec.features; ++f) {
      const float v = std::fabs(a.row(s)[f]);
      if (f < informative) {
        informative_max = std::max(informative_max, v);
      } else {
        ++outlier_values;
        spikes += v >= spec.spike_min;
      }
    }
  }
  // Spikes: a binomial count with mean rate * n; 5 standard deviations either side.
  const double mean = spec.spike_rate * static_cast<double>(outlier_values);
  EXPECT_NEAR(static_cast<double>(spikes), mean, 5 * std::sqrt(mean));
  EXPECT_LT(informative_max, 8.0f);  // the bulk stays Gaussian-sized
  for (std::size_t n : per_class) EXPECT_NEAR(static_cast<double>(n), 4096.0 / 16, 80.0);
}

// With weights that are integers times their per-channel scale and inputs on the activation
// grid, quantization is lossless, so the INT8 pass must equal an exact (double) evaluation of
// the same integer products: checks the int32 accumulation and the dequantizing epilogue.
TEST(Int8Forward, LosslessGridMatchesExactArithmetic) {
  tn::Mlp m;
  const std::size_t in = 32, out = 16;
  tn::DenseLayer l{in, out, std::vector<float>(in * out), std::vector<float>(out)};
  for (std::size_t o = 0; o < out; ++o) {
    for (std::size_t i = 0; i < in; ++i)
      l.w[o * in + i] = static_cast<float>(static_cast<int>((o * 37 + i * 11) % 255) - 127) / 64.0f;
    l.w[o * in] = 127.0f / 64.0f;  // row max = 127/64: scale 1/64, every weight on the grid
    l.b[o] = 0.25f * static_cast<float>(o);
  }
  m.layers.push_back(l);
  const float x_amax = 127.0f / 8.0f;  // scale 1/8
  std::vector<float> x(in);
  for (std::size_t i = 0; i < in; ++i)
    x[i] = static_cast<float>(static_cast<int>(i * 29 % 255) - 127) / 8.0f;
  const std::vector<float> amax{x_amax};
  const tn::Int8Mlp q = tn::quantize_mlp(m, amax);
  ASSERT_EQ(q.layers[0].x_scale, 1.0f / 8.0f);
  const std::vector<float> got = tn::forward_int8(q, x);
  for (std::size_t o = 0; o < out; ++o) {
    double exact = 0.0;
    for (std::size_t i = 0; i < in; ++i)
      exact += static_cast<double>(l.w[o * in + i]) * static_cast<double>(x[i]);
    EXPECT_EQ(got[o], static_cast<float>(exact) + l.b[o]) << o;  // exact: all on 2^-9 grid
  }
}

TEST(Int8Forward, SaturatesOutsideTheAmax) {
  tn::Mlp m;
  m.layers.push_back({1, 1, {1.0f}, {0.0f}});
  const std::vector<float> amax{2.0f};
  const tn::Int8Mlp q = tn::quantize_mlp(m, amax);
  const std::vector<float> big{100.0f}, small{-0.5f};
  EXPECT_FLOAT_EQ(tn::forward_int8(q, big)[0], 2.0f);  // clipped at amax
  EXPECT_NEAR(tn::forward_int8(q, small)[0], -0.5f, 1.0f / 127);
  const std::vector<float> too_many{1.0f, 2.0f};
  EXPECT_THROW(tn::quantize_mlp(m, too_many), std::invalid_argument);
}

// One run shared by the facts below (training takes a few seconds).
const tn::Int8StudyResult& study() {
  static const tn::Int8StudyResult r = [] {
    tn::Int8StudyResult res = tn::run_int8_study();
    std::printf("%s", tn::format_int8_table(res).c_str());
    return res;
  }();
  return r;
}

// Standard error of an accuracy near 94 % on the 4096 held-out samples: sqrt(p (1 - p) / n),
// about 0.4 percentage points. Differences below that are not differences.
double standard_error() {
  const double p = study().get("fp32").accuracy, n = static_cast<double>(study().test_samples);
  return std::sqrt(p * (1 - p) / n);
}

TEST(Int8Study, Fp32ModelLearnsTheTask) {
  EXPECT_GT(study().get("fp32").accuracy, 0.90);  // 16 classes: chance is 6 %
}

// FP16/BF16 inputs with FP32 accumulation: the tensor-core float paths change almost nothing.
TEST(Int8Study, HalfPrecisionPathsAgreeWithFp32) {
  for (const char* name : {"fp16", "bf16"}) {
    EXPECT_GT(study().get(name).agreement, 0.99) << name;
    EXPECT_NEAR(study().get(name).accuracy, study().get("fp32").accuracy, 0.005) << name;
  }
}

TEST(Int8Study, SaneCalibratorStaysWithinASmallLossOfFp32) {
  const double fp32 = study().get("fp32").accuracy;
  for (const char* name : {"ptq_p99.9", "ptq_p99.99"}) {
    EXPECT_GT(study().get(name).accuracy, fp32 - 0.01) << name;
    EXPECT_GT(study().get(name).agreement, 0.97) << name;
  }
  for (const char* name : {"ptq_entropy", "ptq_mse", "ptq_max"})
    EXPECT_GT(study().get(name).accuracy, fp32 - 0.03) << name;
}

TEST(Int8Study, BadlyChosenAmaxLosesClearlyMore) {
  const auto& bad = study().get("ptq_bad_clip");
  const double best =
      std::max(study().get("ptq_p99.9").accuracy, study().get("ptq_p99.99").accuracy);
  EXPECT_LT(bad.accuracy, best - 5 * standard_error());
  EXPECT_LT(bad.agreement, study().get("ptq_p99.99").agreement - 0.02);
}

// The outliers are the point of the data set: a max-calibrated per-tensor scale spends its 127
// steps on rare spikes, and the bulk pays in rounding.
TEST(Int8Study, OutliersHurtMaxCalibration) {
  EXPECT_LT(study().get("ptq_max").accuracy,
            study().get("ptq_p99.99").accuracy - 3 * standard_error());
  EXPECT_GT(study().get("ptq_max").activation_amax[0],
            10 * study().get("ptq_p99.99").activation_amax[0]);
}

TEST(Int8Study, QatRecoversAtLeastAsMuchAsTheBestPtq) {
  double best_ptq = 0.0;
  for (const auto& v : study().variants)
    if (v.method == "ptq") best_ptq = std::max(best_ptq, v.accuracy);
  // Within one standard error: QAT must not be measurably worse than the best calibrator.
  EXPECT_GE(study().get("qat").accuracy, best_ptq - standard_error());
  EXPECT_GT(study().get("qat").agreement, 0.97);
}

}  // namespace
