// Symmetric INT8 quantization as NVIDIA's pytorch-quantization defines it (tensor_quant.py:
// narrow range [-127, 127], scale = amax / 127, torch.round = round half to even; amax <= 2^-24
// quantizes everything to 0; FakeTensorQuantFunction's backward is the clipped STE).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "tcbench/numerics/quantization.hpp"

namespace tn = tcbench::numerics;

namespace {

TEST(Int8Scale, IsAmaxOver127) {
  EXPECT_EQ(tn::int8_scale(127.0f), 1.0f);
  EXPECT_EQ(tn::int8_scale(63.5f), 0.5f);
  EXPECT_FLOAT_EQ(tn::int8_scale(1.0f), 1.0f / 127.0f);
  EXPECT_EQ(tn::int8_scale(0.0f), 0.0f);
  EXPECT_EQ(tn::int8_scale(std::ldexp(1.0f, -24)), 0.0f);  // pytorch-quantization's epsilon
  EXPECT_GT(tn::int8_scale(std::ldexp(1.0f, -23)), 0.0f);
}

TEST(QuantizeInt8, RoundsHalfToEven) {
  // scale 1 makes x / scale exact, so only the rounding rule decides.
  const float s = 1.0f;
  EXPECT_EQ(tn::quantize_int8(0.5f, s), 0);
  EXPECT_EQ(tn::quantize_int8(1.5f, s), 2);
  EXPECT_EQ(tn::quantize_int8(2.5f, s), 2);
  EXPECT_EQ(tn::quantize_int8(3.5f, s), 4);
  EXPECT_EQ(tn::quantize_int8(-0.5f, s), 0);
  EXPECT_EQ(tn::quantize_int8(-1.5f, s), -2);
  EXPECT_EQ(tn::quantize_int8(-2.5f, s), -2);
  EXPECT_EQ(tn::quantize_int8(126.5f, s), 126);
  EXPECT_EQ(tn::quantize_int8(2.5000002f, s), 3);  // just above the tie
  EXPECT_EQ(tn::quantize_int8(2.4999998f, s), 2);
  // scale 0.5: x / scale = 2x, still exact.
  EXPECT_EQ(tn::quantize_int8(0.25f, 0.5f), 0);
  EXPECT_EQ(tn::quantize_int8(0.75f, 0.5f), 2);
  EXPECT_EQ(tn::quantize_int8(1.25f, 0.5f), 2);
}

TEST(QuantizeInt8, ClampsToNarrowRange) {
  EXPECT_EQ(tn::quantize_int8(127.4f, 1.0f), 127);
  EXPECT_EQ(tn::quantize_int8(127.6f, 1.0f), 127);
  EXPECT_EQ(tn::quantize_int8(200.0f, 1.0f), 127);
  EXPECT_EQ(tn::quantize_int8(-128.0f, 1.0f), -127);  // never -128: the range is symmetric
  EXPECT_EQ(tn::quantize_int8(-1e30f, 1.0f), -127);
  EXPECT_EQ(tn::quantize_int8(INFINITY, 1.0f), 127);
  EXPECT_EQ(tn::quantize_int8(-INFINITY, 1.0f), -127);
  EXPECT_EQ(tn::quantize_int8(NAN, 1.0f), 0);
  EXPECT_EQ(tn::quantize_int8(5.0f, 0.0f), 0);  // zero amax: everything is 0
}

TEST(FakeQuant, IsIdentityOnTheGrid) {
  for (float amax : {1.0f, 3.7f, 448.0f, 1e-3f, 65504.0f}) {
    const float s = tn::int8_scale(amax);
    for (int k = -127; k <= 127; ++k) {
      const float x = static_cast<float>(k) * s;
      EXPECT_EQ(tn::quantize_int8(x, s), k) << amax << " " << k;
      EXPECT_EQ(tn::fake_quant_int8(x, amax), x) << amax << " " << k;
    }
  }
}

TEST(FakeQuant, ErrorAtMostHalfAStepInsideAndClipsOutside) {
  std::mt19937 rng(3);
  const float amax = 2.5f;
  const float s = tn::int8_scale(amax);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  for (int i = 0; i < 100000; ++i) {
    const float x = u(rng);
    const float y = tn::fake_quant_int8(x, amax);
    EXPECT_EQ(tn::fake_quant_int8(y, amax), y);  // idempotent
    if (std::fabs(x) <= amax)
      EXPECT_LE(std::fabs(y - x), s / 2 * (1 + 1e-5f)) << x;
    else
      EXPECT_EQ(std::fabs(y), 127.0f * s) << x;
  }
}

TEST(SteMask, PassesInsideZeroOutside) {
  const float amax = 2.0f;
  EXPECT_EQ(tn::ste_grad_mask(0.0f, amax), 1.0f);
  EXPECT_EQ(tn::ste_grad_mask(2.0f, amax), 1.0f);  // |x| <= amax: the boundary passes
  EXPECT_EQ(tn::ste_grad_mask(-2.0f, amax), 1.0f);
  EXPECT_EQ(tn::ste_grad_mask(std::nextafter(2.0f, 3.0f), amax), 0.0f);
  EXPECT_EQ(tn::ste_grad_mask(-2.5f, amax), 0.0f);
  EXPECT_EQ(tn::ste_grad_mask(INFINITY, amax), 0.0f);
  EXPECT_EQ(tn::ste_grad_mask(NAN, amax), 0.0f);
}

TEST(PerTensor, ScaleFromAmaxAndRoundTrip) {
  const std::vector<float> x{-2.54f, 0.0f, 1.0f, 2.54f, 0.01f};
  std::vector<std::int8_t> q(x.size());
  const float s = tn::quantize_per_tensor(x, q);
  EXPECT_FLOAT_EQ(s, 2.54f / 127.0f);
  EXPECT_EQ(q[0], -127);
  EXPECT_EQ(q[3], 127);
  EXPECT_EQ(q[1], 0);
  EXPECT_EQ(q[2], 50);  // 1.0 / 0.02 = 50
  EXPECT_EQ(q[4], 0);   // 0.01 / 0.02 = 0.5, the tie goes to even 0
  std::vector<float> back(x.size());
  tn::dequantize(q, s, back);
  for (std::size_t i = 0; i < x.size(); ++i) EXPECT_LE(std::fabs(back[i] - x[i]), s / 2 + 1e-7f);
  std::vector<std::int8_t> short_out(2);
  EXPECT_THROW(tn::quantize_per_tensor(x, short_out), std::invalid_argument);
}

TEST(PerChannel, OneScalePerOutputRow) {
  // 3 output channels x 4 inputs with very different magnitudes per row.
  const std::size_t rows = 3, cols = 4;
  const std::vector<float> w{0.1f,  -0.2f, 0.05f,  0.2f,   // amax 0.2
                             10.0f, 3.0f,  -12.7f, 1.0f,   // amax 12.7
                             0.0f,  0.0f,  0.0f,   0.0f};  // amax 0
  const std::vector<float> scales = tn::per_channel_scales(w, rows, cols);
  ASSERT_EQ(scales.size(), rows);
  EXPECT_FLOAT_EQ(scales[0], 0.2f / 127.0f);
  EXPECT_FLOAT_EQ(scales[1], 12.7f / 127.0f);
  EXPECT_EQ(scales[2], 0.0f);
  std::vector<std::int8_t> q(w.size());
  tn::quantize_per_channel(w, rows, cols, scales, q);
  EXPECT_EQ(q[1], -127);  // each row's largest magnitude uses the full range
  EXPECT_EQ(q[3], 127);
  EXPECT_EQ(q[6], -127);
  EXPECT_EQ(q[4], 100);  // 10 / 0.1
  for (std::size_t c = 0; c < cols; ++c) EXPECT_EQ(q[8 + c], 0);
  std::vector<float> back(w.size());
  tn::dequantize_per_channel(q, rows, cols, scales, back);
  // The small row keeps ~3 significant digits per channel; one per-tensor scale (12.7/127 =
  // 0.1) would round all of it to 0 (|w| <= 0.2 is at most 2 steps).
  for (std::size_t c = 0; c < cols; ++c)
    EXPECT_LE(std::fabs(back[c] - w[c]), scales[0] / 2 + 1e-7f) << c;
  std::vector<std::int8_t> qt(w.size());
  const float st = tn::quantize_per_tensor(w, qt);
  double err_channel = 0, err_tensor = 0;
  for (std::size_t c = 0; c < cols; ++c) {
    err_channel += std::fabs(back[c] - w[c]);
    err_tensor += std::fabs(tn::dequantize_int8(qt[c], st) - w[c]);
  }
  EXPECT_LT(err_channel * 10, err_tensor);
  std::vector<float> bad_scales(2);
  EXPECT_THROW(tn::quantize_per_channel(w, rows, cols, bad_scales, q), std::invalid_argument);
  EXPECT_THROW(tn::per_channel_scales(w, 2, 4), std::invalid_argument);
}

}  // namespace
