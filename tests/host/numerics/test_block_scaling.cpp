// Block scale rules (numerics/block_scaling.hpp, block_quantize.hpp) on cases derived by hand from
// their sources: OCP MX v1.0 section 6.3 (shared exponent floor(log2(amax)) - emax_elem, clamping,
// NaN), cuBLAS's round-up UE8M0 rule, NVFP4 (s_enc = 6 * 448 / amax, block scale e4m3(amax / 6 *
// s_enc)), DeepSeek-V3's amax / 448 per 1x128 tile and 128x128 block, row-wise scaling, and the
// storage each costs. tests/scripts/test_narrow_formats.py checks the same C++ against a numpy
// re-implementation of the specs on random and special blocks.
#include "tcbench/numerics/block_quantize.hpp"
#include "tcbench/numerics/block_scaling.hpp"
#include "tcbench/numerics/scale_layout.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace tn = tcbench::numerics;
using tn::ElementFormat;
using tn::Granularity;
using tn::MxRule;

namespace {

TEST(MxScale, SharedExponentIsFloorLog2AmaxMinusEmax) {
  // amax 1: floor(log2 1) = 0; E4M3 emax 8 -> X = 2^-8 (E8M0 code 127 - 8 = 119).
  EXPECT_EQ(tn::mx_scale_code(1.0f, ElementFormat::e4m3, MxRule::ocp), 119);
  // 1.0 / 2^-8 = 256 = 2^8: E4M3 exponent field 8 + 7 = 15, mantissa 0 -> 0x78.
  EXPECT_EQ(tn::mx_encode(1.0f, 119, ElementFormat::e4m3), 0x78);
  // 0.75 / 2^-8 = 192 = 1.5 * 2^7 -> 0b0'1110'100 = 0x74.
  EXPECT_EQ(tn::mx_encode(0.75f, 119, ElementFormat::e4m3), 0x74);
  EXPECT_EQ(tn::mx_decode(0x74, 119, ElementFormat::e4m3), 0.75f);
  // E2M1 (emax 2): amax 6 -> floor(log2 6) - 2 = 0 -> X = 1 (code 127); E5M2 emax 15.
  EXPECT_EQ(tn::mx_scale_code(6.0f, ElementFormat::e2m1, MxRule::ocp), 127);
  EXPECT_EQ(tn::mx_scale_code(1.0f, ElementFormat::e5m2, MxRule::ocp), 127 - 15);
  EXPECT_EQ(tn::mx_scale_code(1.0f, ElementFormat::e3m2, MxRule::ocp), 127 - 4);
  EXPECT_EQ(tn::mx_scale_code(1.0f, ElementFormat::e2m3, MxRule::ocp), 127 - 2);
}

TEST(MxScale, NormalValuesBeyondTheMaxAreClampedUnderTheOcpRuleNotTheRoundUpRule) {
  // amax 1.9: X = 2^-8 and 1.9 * 256 = 486.4 > 448: clamped to 448 (0x7E).
  EXPECT_EQ(tn::mx_encode(1.9f, 119, ElementFormat::e4m3), 0x7E);
  // cuBLAS: 1.9 / 448 rounded up to a power of two = 2^-7 (code 120); 1.9 * 128 = 243.2 -> 240
  // (1.875 * 2^7: 0b0'1110'111 = 0x77), nothing clamped.
  EXPECT_EQ(tn::mx_scale_code(1.9f, ElementFormat::e4m3, MxRule::round_up), 120);
  EXPECT_EQ(tn::mx_encode(1.9f, 120, ElementFormat::e4m3), 0x77);
  // E2M1: amax 7 -> X = 1, 7 clamps to 6 (code 7); round-up: 7/6 -> 2, 3.5 -> 4 (code 6).
  EXPECT_EQ(tn::mx_encode(7.0f, 127, ElementFormat::e2m1), 7);
  EXPECT_EQ(tn::mx_scale_code(7.0f, ElementFormat::e2m1, MxRule::round_up), 128);
  EXPECT_EQ(tn::mx_encode(7.0f, 128, ElementFormat::e2m1), 6);
}

TEST(MxScale, ZeroNanInfAndTheEdgesOfE8m0) {
  for (MxRule r : {MxRule::ocp, MxRule::round_up}) {
    EXPECT_EQ(tn::mx_scale_code(0.0f, ElementFormat::e4m3, r), 0);  // 2^-127
    EXPECT_EQ(tn::mx_scale_code(NAN, ElementFormat::e4m3, r), tn::kE8m0Nan);
    EXPECT_EQ(tn::mx_scale_code(INFINITY, ElementFormat::e4m3, r), tn::kE8m0Nan);
  }
  EXPECT_TRUE(std::isnan(tn::mx_decode(0x00, tn::kE8m0Nan, ElementFormat::e4m3)));
  // amax 2^-140 (an FP32 subnormal): -140 - 8 < -127 -> the smallest scale, 2^-13 flushes.
  EXPECT_EQ(tn::mx_scale_code(0x1p-140f, ElementFormat::e4m3, MxRule::ocp), 0);
  EXPECT_EQ(tn::mx_encode(0x1p-140f, 0, ElementFormat::e4m3), 0);
  // amax = FLT_MAX: 127 - 8 = 119 fits (code 246).
  EXPECT_EQ(tn::mx_scale_code(FLT_MAX, ElementFormat::e4m3, MxRule::ocp), 246);
  EXPECT_EQ(tn::decode_e8m0(246), 0x1p119f);
}

TEST(Nvfp4, TwoLevelScaleOnAWorkedBlock) {
  // Tensor amax 12: s_enc = 6 * 448 / 12 = 224. Block amax 3: 3 / 6 * 224 = 112 = 1.75 * 2^6,
  // exact in E4M3. Elements x * 224 / 112 = 2x: 3 -> 6 (0b0111), -1 -> -2 (0b1100), 0.2 -> 0.4
  // -> 0.5 (0b0001), 1.3 -> 2.6 -> 3 (0b0101).
  EXPECT_EQ(tn::nvfp4_tensor_scale(12.0f), 224.0f);
  const std::uint8_t s = tn::nvfp4_scale_code(3.0f, 224.0f);
  EXPECT_EQ(tn::decode_ue4m3(s), 112.0f);
  EXPECT_EQ(tn::nvfp4_encode(3.0f, s, 224.0f), 0x7);
  EXPECT_EQ(tn::nvfp4_encode(-1.0f, s, 224.0f), 0xC);
  EXPECT_EQ(tn::nvfp4_encode(0.2f, s, 224.0f), 0x1);
  EXPECT_EQ(tn::nvfp4_encode(1.3f, s, 224.0f), 0x5);
  EXPECT_EQ(tn::nvfp4_decode(0x7, s, 224.0f), 3.0f);
  EXPECT_EQ(tn::nvfp4_decode(0xC, s, 224.0f), -1.0f);
  // A zero tensor keeps s_enc = 1; a zero block's scale is 0 and its elements 0.
  EXPECT_EQ(tn::nvfp4_tensor_scale(0.0f), 1.0f);
  EXPECT_EQ(tn::nvfp4_scale_code(0.0f, 224.0f), 0);
  EXPECT_EQ(tn::nvfp4_encode(1e-30f, 0, 224.0f), 0);
}

TEST(GroupScaling, DeepSeekScaleIsAmaxOver448) {
  // amax 2: multiplier 448 / 2 = 224, stored scale 1 / 224; 2 -> 448 (0x7E).
  EXPECT_EQ(tn::group_scale(2.0f, ElementFormat::e4m3), 224.0f);
  EXPECT_EQ(tn::group_encode(2.0f, 224.0f, ElementFormat::e4m3), 0x7E);
  EXPECT_EQ(tn::group_scale(0.0f, ElementFormat::e4m3), 1.0f);
}

std::vector<float> ramp(std::int64_t rows, std::int64_t cols) {
  std::vector<float> x(static_cast<std::size_t>(rows * cols));
  for (std::size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(0.37f * static_cast<float>(i)) * (1.0f + static_cast<float>(i % 97));
  return x;
}

TEST(Quantize, EachGranularityScalesItsOwnGroup) {
  const std::int64_t rows = 130, cols = 300;  // partial 128-blocks both ways
  std::vector<float> x = ramp(rows, cols);
  x[5 * cols + 200] = 1e4f;  // an outlier in row 5, K-block 1 (of 128), block 6 (of 32)
  const auto t = tn::quantize(x, rows, cols, Granularity::tensor, ElementFormat::e4m3);
  const auto r = tn::quantize(x, rows, cols, Granularity::row, ElementFormat::e4m3);
  const auto v = tn::quantize(x, rows, cols, Granularity::tile_1x128, ElementFormat::e4m3);
  const auto b = tn::quantize(x, rows, cols, Granularity::block_128x128, ElementFormat::e4m3);
  const auto m = tn::quantize(x, rows, cols, Granularity::mx, ElementFormat::e4m3);
  ASSERT_EQ(t.scales.size(), 1u);
  ASSERT_EQ(r.scales.size(), 130u);
  ASSERT_EQ(v.scales.size(), 130u * 3);
  ASSERT_EQ(b.scales.size(), 2u * 3);
  ASSERT_EQ(m.scale_codes.size(), 130u * 10);
  const float outlier_scale = 1.0f / (448.0f / 1e4f);  // the inverse of the multiplier
  EXPECT_EQ(t.scales[0], outlier_scale);
  EXPECT_EQ(r.scales[5], outlier_scale);
  EXPECT_NE(r.scales[6], r.scales[5]);
  EXPECT_EQ(v.scales[5 * 3 + 1], outlier_scale);
  EXPECT_NE(v.scales[5 * 3 + 0], v.scales[5 * 3 + 1]);
  EXPECT_EQ(b.scales[1], outlier_scale);    // block row 0, block 1
  EXPECT_NE(b.scales[3 + 1], b.scales[1]);  // block row 1 does not see it
  EXPECT_EQ(m.scale_codes[5 * 10 + 6], tn::mx_scale_code(1e4f, ElementFormat::e4m3, MxRule::ocp));
  // Every FP32-scaled granularity maps the outlier onto E4M3's max and back (to FP32 rounding).
  for (const auto* q : {&t, &r, &v, &b}) EXPECT_FLOAT_EQ(q->value(5, 200), 1e4f);
}

TEST(Quantize, BytesPerElementCountTheScales) {
  const std::vector<float> x = ramp(128, 256);
  auto bpe = [&](Granularity g, ElementFormat f) {
    return tn::quantize(x, 128, 256, g, f).bytes_per_element();
  };
  const double n = 128.0 * 256.0;
  EXPECT_DOUBLE_EQ(bpe(Granularity::tensor, ElementFormat::e4m3), 1.0 + 4.0 / n);
  EXPECT_DOUBLE_EQ(bpe(Granularity::row, ElementFormat::e4m3), 1.0 + 4.0 / 256.0);
  EXPECT_DOUBLE_EQ(bpe(Granularity::tile_1x128, ElementFormat::e4m3), 1.0 + 4.0 / 128.0);
  EXPECT_DOUBLE_EQ(bpe(Granularity::block_128x128, ElementFormat::e4m3), 1.0 + 2 * 4.0 / n);
  EXPECT_DOUBLE_EQ(bpe(Granularity::mx, ElementFormat::e4m3), 1.0 + 1.0 / 32.0);
  EXPECT_DOUBLE_EQ(bpe(Granularity::mx, ElementFormat::e2m3), 0.75 + 1.0 / 32.0);
  EXPECT_DOUBLE_EQ(bpe(Granularity::mx, ElementFormat::e2m1), 0.5 + 1.0 / 32.0);
  EXPECT_DOUBLE_EQ(bpe(Granularity::nvfp4, ElementFormat::e2m1), 0.5 + 1.0 / 16.0 + 4.0 / n);
}

TEST(Quantize, DelayedScalingUsesTheGivenAmaxAndSaturates) {
  const std::vector<float> x = {1.0f, -2.0f, 4.0f, 0.5f};
  const auto q = tn::quantize(x, 1, 4, Granularity::tensor, ElementFormat::e4m3, MxRule::ocp, 2.0f);
  EXPECT_EQ(q.scales[0], 2.0f / 448.0f);
  EXPECT_EQ(q.value(0, 2), 2.0f);  // 4 * 224 = 896 saturates to 448
}

TEST(Quantize, RefusesBadInput) {
  const std::vector<float> x(12, 1.0f);
  EXPECT_THROW(tn::quantize(x, 3, 5, Granularity::mx, ElementFormat::e4m3), std::invalid_argument);
  EXPECT_THROW(tn::quantize(x, 3, 4, Granularity::nvfp4, ElementFormat::e4m3),
               std::invalid_argument);
  const auto t = tn::quantize(x, 3, 4, Granularity::tensor, ElementFormat::e4m3);
  EXPECT_THROW(tn::to_cublas_scales(t), std::invalid_argument);
}

TEST(Quantize, CublasScaleTensorsFollowTheLayouts) {
  const std::int64_t rows = 130, cols = 300;
  const std::vector<float> x = ramp(rows, cols);
  auto f32 = [](const std::vector<std::uint8_t>& bytes, std::int64_t i) {
    float v = 0;
    std::memcpy(&v, bytes.data() + i * 4, 4);
    return v;
  };
  const auto v = tn::quantize(x, rows, cols, Granularity::tile_1x128, ElementFormat::e4m3);
  const auto vb = tn::to_cublas_scales(v);
  ASSERT_EQ(vb.size(), static_cast<std::size_t>(tn::vec128_elements(rows, cols) * 4));
  EXPECT_EQ(f32(vb, 7 + 2 * rows), v.scales[7 * 3 + 2]);  // M-major
  const auto b = tn::quantize(x, rows, cols, Granularity::block_128x128, ElementFormat::e4m3);
  const auto bb = tn::to_cublas_scales(b);
  ASSERT_EQ(bb.size(), static_cast<std::size_t>(4 * 2 * 4));  // L4 = 4, 2 block rows
  EXPECT_EQ(f32(bb, 2 + 1 * 4), b.scales[1 * 3 + 2]);
  EXPECT_EQ(f32(bb, 3), 0.0f);  // padding
  const auto n = tn::quantize(x, rows, cols, Granularity::nvfp4, ElementFormat::e2m1);
  const auto nb = tn::to_cublas_scales(n);
  ASSERT_EQ(nb.size(), static_cast<std::size_t>(tn::block_scale_elements(rows, cols, 16)));
  EXPECT_EQ(nb[static_cast<std::size_t>(tn::block_scale_offset(129, 18, cols, 16))],
            n.scale_codes[129 * 19 + 18]);
}

TEST(Fp4Packing, ElementTwoIIsTheLowNibble) {
  const std::vector<std::uint8_t> codes = {0x1, 0xC, 0x7};
  const std::vector<std::uint8_t> p = tn::pack_fp4(codes);
  ASSERT_EQ(p.size(), 2u);
  EXPECT_EQ(p[0], 0xC1);
  EXPECT_EQ(p[1], 0x07);
}

}  // namespace
