// The narrow formats' rows of the element table (numerics/element.hpp) against CUDA's own decoding
// of the bit patterns: max, min normal, min subnormal and epsilon of every element format follow
// from its codes, encode and decode are inverse on every code, and E8M0 and UE4M3 behave as
// cuda_fp8.h and the cuBLAS documentation say. tests/scripts/test_narrow_formats.py compares every
// code with ml_dtypes.
#include "tcbench/numerics/narrow_formats.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

namespace tn = tcbench::numerics;
using tn::ElementFormat;

namespace {

class Element : public ::testing::TestWithParam<ElementFormat> {};

TEST_P(Element, TableMatchesTheDecodedCodes) {
  const ElementFormat f = GetParam();
  const tn::FormatLimits info = tn::limits(f);
  float max = 0, min_sub = INFINITY;
  const int sign_bit = 1 << (tn::element_info(f).bits - 1);
  for (int c = 0; c < sign_bit; ++c) {
    const float v = tn::decode(static_cast<std::uint8_t>(c), f);
    if (!std::isfinite(v)) continue;
    max = std::max(max, v);
    if (v > 0) min_sub = std::min(min_sub, v);
  }
  EXPECT_EQ(max, info.max);
  EXPECT_EQ(min_sub, info.min_subnormal);
  // At min_normal the spacing is min_normal * epsilon (a normal binade): its successor is
  // representable and the midpoint ties to it (even mantissa).
  EXPECT_EQ(tn::round_trip(info.min_normal * (1 + info.epsilon), f),
            info.min_normal * (1 + info.epsilon));
  EXPECT_EQ(tn::round_trip(info.min_normal * (1 + info.epsilon / 2), f), info.min_normal);
  EXPECT_EQ(tn::round_trip(1.0f + info.epsilon, f), 1.0f + info.epsilon);
  EXPECT_EQ(tn::round_trip(1.0f + info.epsilon / 2, f), 1.0f);  // a tie: to even
  EXPECT_EQ(std::ilogb(info.max), tn::element_info(f).emax);
}

TEST_P(Element, EncodeInvertsDecodeOnEveryFiniteCode) {
  const ElementFormat f = GetParam();
  for (int c = 0; c < tn::code_count(f); ++c) {
    const float v = tn::decode(static_cast<std::uint8_t>(c), f);
    if (!std::isfinite(v)) continue;  // E5M2's Inf saturates to max, NaN stays NaN
    const std::uint8_t back = tn::encode(v, f);
    if (v == 0.0f)
      EXPECT_EQ(tn::decode(back, f), 0.0f);
    else
      EXPECT_EQ(back, c) << tn::name(f) << " code " << c;
  }
}

TEST_P(Element, OutOfRangeSaturates) {
  const ElementFormat f = GetParam();
  EXPECT_EQ(tn::round_trip(1e30f, f), tn::limits(f).max);
  EXPECT_EQ(tn::round_trip(-1e30f, f), -tn::limits(f).max);
}

INSTANTIATE_TEST_SUITE_P(All, Element,
                         ::testing::Values(ElementFormat::e4m3, ElementFormat::e5m2,
                                           ElementFormat::e3m2, ElementFormat::e2m3,
                                           ElementFormat::e2m1),
                         [](const auto& p) { return std::string(tn::name(p.param)); });

TEST(Fp4Fp6, NanBecomesPositiveMaxnormAsCudaDocuments) {
  EXPECT_EQ(tn::round_trip(NAN, ElementFormat::e2m1), 6.0f);
  EXPECT_EQ(tn::round_trip(NAN, ElementFormat::e2m3), 7.5f);
  EXPECT_EQ(tn::round_trip(NAN, ElementFormat::e3m2), 28.0f);
}

TEST(E8m0, PowersOfTwoFrom2ToTheMinus127To2ToThe127AndNan) {
  EXPECT_EQ(tn::decode_e8m0(0), 0x1p-127f);
  EXPECT_EQ(tn::decode_e8m0(127), 1.0f);
  EXPECT_EQ(tn::decode_e8m0(254), 0x1p127f);
  EXPECT_TRUE(std::isnan(tn::decode_e8m0(tn::kE8m0Nan)));
  EXPECT_EQ(tn::encode_e8m0(3.0f, tn::E8m0Rounding::toward_zero), 128);
  EXPECT_EQ(tn::encode_e8m0(3.0f, tn::E8m0Rounding::up), 129);
  EXPECT_EQ(tn::encode_e8m0(4.0f, tn::E8m0Rounding::up), 129);
  EXPECT_EQ(tn::encode_e8m0(0x1p-140f, tn::E8m0Rounding::toward_zero), 0);  // clipped
  EXPECT_EQ(tn::encode_e8m0(INFINITY, tn::E8m0Rounding::up), 254);          // satfinite
  EXPECT_EQ(tn::encode_e8m0(NAN, tn::E8m0Rounding::up), tn::kE8m0Nan);
}

TEST(Ue4m3, IsE4m3WithoutItsSign) {
  EXPECT_EQ(tn::encode_ue4m3(-112.0f), tn::encode_ue4m3(112.0f));
  EXPECT_EQ(tn::decode_ue4m3(0x80 | tn::encode_ue4m3(112.0f)), 112.0f);
  EXPECT_EQ(tn::decode_ue4m3(0x7E), 448.0f);
  EXPECT_EQ(tn::encode_ue4m3(1e6f), 0x7E);  // satfinite
}

}  // namespace
