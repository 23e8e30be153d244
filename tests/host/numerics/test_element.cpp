// The element table (numerics/element.hpp) against references nobody here wrote: every row's
// limits are std::numeric_limits' (FP64, FP32, INT8, INT32) or the value CUDA's own host
// conversions decode from the format's extreme bit patterns (FP16, BF16, FP8, FP6, FP4, E8M0,
// UE4M3; TF32 as the FP32 bit patterns with its 13 low mantissa bits clear). Exact equality: a
// row that is off by one ulp fails. tests/scripts/test_narrow_formats.py checks the same rows
// against ml_dtypes' and numpy's finfo/iinfo. The views and lookups follow the rows.
#include "tcbench/numerics/element.hpp"
#include "tcbench/numerics/formats.hpp"
#include "tcbench/numerics/narrow_formats.hpp"
#include "tcbench/numerics/training_math.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace tn = tcbench::numerics;
using tn::Element;

namespace {

// What a row must hold, from an independent reference.
struct Expected {
  double max, min_normal, min_subnormal, epsilon;
};

template <typename T>
Expected from_numeric_limits() {
  using L = std::numeric_limits<T>;
  if constexpr (L::is_integer)
    return {static_cast<double>(L::max()), 1.0, 1.0, 1.0};
  else
    return {L::max(), L::min(), L::denorm_min(), L::epsilon()};
}

float fp32_bits(std::uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
float fp16_bits(unsigned b) {
  return __half2float(__ushort_as_half(static_cast<unsigned short>(b)));
}
float bf16_bits(unsigned b) {
  return __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(b)));
}
// An element format's code, decoded by CUDA (cuda_fp8.h, cuda_fp6.h, cuda_fp4.h).
float code(tn::ElementFormat f, unsigned c) {
  return tn::decode(static_cast<std::uint8_t>(c), f);
}

// The bit patterns: max, min normal, min subnormal, and (1's code, its successor's code).
Expected from_codes(tn::ElementFormat f, unsigned max, unsigned min_normal, unsigned one,
                    unsigned one_next) {
  return {code(f, max), code(f, min_normal), code(f, 1), code(f, one_next) - code(f, one)};
}

Expected reference(Element e) {
  using F = tn::ElementFormat;
  switch (e) {
    case Element::fp64:
      return from_numeric_limits<double>();
    case Element::fp32:
      return from_numeric_limits<float>();
    case Element::tf32:  // sign, 8 exponent bits, 10 mantissa bits: the top 19 of binary32
      return {fp32_bits(0x7F7FE000u), fp32_bits(0x00800000u), fp32_bits(0x00002000u),
              fp32_bits(0x3F802000u) - 1.0f};
    case Element::fp16:
      return {fp16_bits(0x7BFF), fp16_bits(0x0400), fp16_bits(0x0001),
              fp16_bits(0x3C01) - fp16_bits(0x3C00)};
    case Element::bf16:
      return {bf16_bits(0x7F7F), bf16_bits(0x0080), bf16_bits(0x0001),
              bf16_bits(0x3F81) - bf16_bits(0x3F80)};
    case Element::e4m3:
      return from_codes(F::e4m3, 0x7E, 0x08, 0x38, 0x39);
    case Element::e5m2:
      return from_codes(F::e5m2, 0x7B, 0x04, 0x3C, 0x3D);
    case Element::e3m2:
      return from_codes(F::e3m2, 0x1F, 0x04, 0x0C, 0x0D);
    case Element::e2m3:
      return from_codes(F::e2m3, 0x1F, 0x08, 0x08, 0x09);
    case Element::e2m1:
      return from_codes(F::e2m1, 0x7, 0x2, 0x2, 0x3);
    case Element::ue8m0:  // 2^(code - 127): no subnormals, no zero; 1 is code 127, then 2
      return {tn::decode_e8m0(0xFE), tn::decode_e8m0(0x00), tn::decode_e8m0(0x00),
              tn::decode_e8m0(128) - tn::decode_e8m0(127)};
    case Element::ue4m3:  // E4M3's codes 0..127
      return {tn::decode_ue4m3(0x7E), tn::decode_ue4m3(0x08), tn::decode_ue4m3(0x01),
              tn::decode_ue4m3(0x39) - tn::decode_ue4m3(0x38)};
    case Element::int8:
      return from_numeric_limits<std::int8_t>();
    case Element::int32:
      return from_numeric_limits<std::int32_t>();
  }
  return {};
}

class Row : public ::testing::TestWithParam<Element> {};

TEST_P(Row, LimitsAreTheReferencesValues) {
  const Element e = GetParam();
  const tn::ElementInfo r = tn::element_info(e);
  const Expected want = reference(e);
  EXPECT_EQ(r.max, want.max);
  EXPECT_EQ(r.min_normal, want.min_normal);
  EXPECT_EQ(r.min_subnormal, want.min_subnormal);
  EXPECT_EQ(r.epsilon, want.epsilon);
  EXPECT_EQ(r.unit_roundoff, r.integer ? 0.0 : want.epsilon / 2);
  EXPECT_EQ(r.emax, std::ilogb(want.max));
  EXPECT_EQ(r.id, e);
  EXPECT_EQ(tn::parse_element(r.name), e);
}

std::vector<Element> every_element() {
  std::vector<Element> all;
  for (int i = 0; i < tn::kElementCount; ++i) all.push_back(static_cast<Element>(i));
  return all;
}
INSTANTIATE_TEST_SUITE_P(Every, Row, ::testing::ValuesIn(every_element()),
                         [](const auto& p) { return std::string(tn::name(p.param)); });

TEST(ElementTable, BitsAndTypes) {
  // cuBLAS's own sizes: sizeof of the CUDA storage types, 4 and 6 bits for FP4 and FP6.
  EXPECT_EQ(tn::element_info(Element::fp64).bits, 8 * static_cast<int>(sizeof(double)));
  EXPECT_EQ(tn::element_info(Element::fp16).bits, 8 * static_cast<int>(sizeof(__half)));
  EXPECT_EQ(tn::element_info(Element::bf16).bits, 8 * static_cast<int>(sizeof(__nv_bfloat16)));
  EXPECT_EQ(tn::element_info(Element::tf32).bits, 32);  // stored as FP32
  EXPECT_EQ(tn::element_info(Element::e2m1).bits, 4);
  EXPECT_EQ(tn::element_info(Element::e3m2).bits, 6);
  EXPECT_EQ(tn::element_info(Element::int32).bits, 32);
  EXPECT_TRUE(tn::element_info(Element::int8).integer);
  EXPECT_FALSE(tn::element_info(Element::ue8m0).integer);
  // One row per type, but the two library_types.h gives another's value.
  EXPECT_EQ(tn::find_element(CUDA_R_32F), Element::fp32);
  EXPECT_EQ(tn::find_element(CUDA_R_8F_UE4M3), Element::e4m3);
  EXPECT_EQ(tn::find_element(CUDA_R_8F_UE8M0), Element::ue8m0);
  EXPECT_EQ(tn::find_element(CUDA_R_32I), Element::int32);
  EXPECT_EQ(tn::find_element(CUDA_C_32F), std::nullopt);
  EXPECT_EQ(tn::element_info(Element::e5m2).cuda_name, "CUDA_R_8F_E5M2");
  EXPECT_EQ(tn::element_bytes(Element::tf32), 4);
  EXPECT_EQ(tn::element_bytes(Element::int8), 1);
  EXPECT_THROW((void)tn::element_bytes(Element::e2m1), std::invalid_argument);
  EXPECT_EQ(tn::parse_element("e8m0"), std::nullopt);  // the row is ue8m0
}

TEST(ElementTable, ViewsReadTheirRows) {
  EXPECT_EQ(tn::name(tn::Format::bf16), "bf16");
  EXPECT_EQ(tn::name(tn::Fp8Format::e5m2), "e5m2");
  EXPECT_EQ(tn::name(tn::ElementFormat::e2m3), "e2m3");
  EXPECT_EQ(tn::name(tn::Storage::fp32), "fp32");
  EXPECT_EQ(tn::limits(tn::Fp8Format::e4m3).max, 448.0f);
  EXPECT_EQ(tn::limits(tn::ElementFormat::e4m3).max, tn::limits(tn::Format::e4m3).max);
  EXPECT_EQ(tn::element_info(tn::ElementFormat::e2m1).emax, 2);
  EXPECT_EQ(tn::view_of(tn::kFp8Formats, Element::e5m2), tn::Fp8Format::e5m2);
  EXPECT_EQ(tn::view_of(tn::kFp8Formats, Element::fp16), std::nullopt);
  EXPECT_EQ(tn::parse_view(tn::kElementFormats, "e3m2"), tn::ElementFormat::e3m2);
  EXPECT_EQ(tn::parse_view(tn::kElementFormats, "fp16"), std::nullopt);
  EXPECT_EQ(tn::code_count(tn::ElementFormat::e2m1), 16);
}

}  // namespace
