// The FP8 accumulator study: its operands are the block study's (E4M3, per-tensor current
// scaling), its 13-bit curve matches an independent fixed-point accumulator written here from
// the published description (align to the largest exponent, keep 13 bits, truncate), and the
// curves order as the models say they must.
#include "tcbench/studies/fp8_accumulation.hpp"

#include "tcbench/numerics/narrow_formats.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>

namespace ts = tcbench::studies;
namespace tn = tcbench::numerics;

namespace {

// E4M3 products are integer multiples of 2^-18 (the smallest subnormal squared).
std::int64_t fixed(double x) {
  return std::llround(std::ldexp(x, 18));
}
int top_bit(std::int64_t v) {
  int b = -1;
  for (std::uint64_t u = static_cast<std::uint64_t>(std::llabs(v)); u; u >>= 1) ++b;
  return b;
}
// |v| with the bits below `keep` under its top bit (or under `top` if given) cleared, sign kept.
std::int64_t truncate_magnitude(std::int64_t v, int top, int keep) {
  const int drop = top - keep;
  if (drop <= 0) return v;
  const std::int64_t mag = std::llabs(v) >> drop << drop;
  return v < 0 ? -mag : mag;
}

// A 13-bit truncating accumulator, 32 products per step, in integers.
double fixed_point_13_bit_dot(const float* a, const float* b, int k) {
  std::int64_t acc = 0;
  for (int start = 0; start < k; start += 32) {
    std::int64_t p[32];
    int top = top_bit(acc);
    for (int i = 0; i < 32; ++i) {
      p[i] = fixed(static_cast<double>(a[start + i]) * b[start + i]);
      top = std::max(top, top_bit(p[i]));
    }
    if (top < 0) continue;
    std::int64_t sum = truncate_magnitude(acc, top, 13);
    for (std::int64_t x : p) sum += truncate_magnitude(x, top, 13);
    acc = truncate_magnitude(sum, top_bit(sum), 13);
  }
  return std::ldexp(static_cast<double>(acc), -18);
}

TEST(Fp8Accumulation, OperandsAreTheBlockStudysE4m3WithCurrentScaling) {
  const ts::Fp8Operands o = ts::fp8_study_operands(4, 3, 1024);
  ASSERT_EQ(o.a8.size(), 4u * 1024);
  ASSERT_EQ(o.b8.size(), 3u * 1024);
  float amax_a = 0, amax_b = 0;
  for (std::size_t i = 0; i < o.a8.size(); ++i) {
    ASSERT_EQ(tn::round_trip(o.a8[i], tn::ElementFormat::e4m3), o.a8[i]);
    amax_a = std::max(amax_a, std::fabs(o.a8[i]));
    // Weights uniform in +-sqrt(3 / k); the E4M3 value dequantizes to within 2^-4 of them.
    ASSERT_LE(std::fabs(o.a32[i]), std::sqrt(3.0f / 1024));
    ASSERT_NEAR(o.a8[i] * o.a_scale_inv, o.a32[i], std::fabs(o.a32[i]) / 16 + 1e-6f);
  }
  for (float x : o.b8) amax_b = std::max(amax_b, std::fabs(x));
  EXPECT_EQ(amax_a, 448.0f);  // current scaling maps amax onto E4M3's max
  EXPECT_EQ(amax_b, 448.0f);
  EXPECT_THROW(ts::fp8_study_operands(0, 1, 1), std::invalid_argument);
}

TEST(Fp8Accumulation, The13BitCurveMatchesAnIndependentFixedPointAccumulator) {
  const ts::Fp8Operands o = ts::fp8_study_operands(2, 2, 16384);
  const tn::AccumulatorModel m{13, tn::AccRounding::truncate, 32, 0};
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j) {
      const float* a = o.a8.data() + i * 16384;
      const float* b = o.b8.data() + j * 16384;
      const float got = tn::emulate_dot(
          m, [&](int l) { return static_cast<double>(a[l]) * b[l]; }, 16384);
      EXPECT_EQ(static_cast<double>(got), fixed_point_13_bit_dot(a, b, 16384));
    }
}

TEST(Fp8Accumulation, CurvesOrderAsTheModelsSay) {
  const auto cases = ts::accumulation_cases();
  const auto errors = ts::accumulation_errors(8, 8);
  ASSERT_EQ(errors.size(), cases.size());
  auto curve = [&](std::string_view variant, int promotion) -> const auto& {
    for (std::size_t c = 0; c < cases.size(); ++c)
      if (cases[c].variant == variant &&
          (!cases[c].model || cases[c].model->promotion == promotion))
        return errors[c];
    throw std::logic_error("no case " + std::string(variant));
  };
  const auto& exact = curve("accum_fp64", 0);
  const auto& fp32 = curve("accum_fp32", 0);
  const auto& plain = curve("accum_13bits", 0);
  const auto& n128 = curve("accum_13bits", 128);
  const auto& b25 = curve("accum_25bits", 0);
  const std::size_t last = plain.size() - 1;
  for (std::size_t p = 0; p <= last; ++p) {
    EXPECT_EQ(exact[p].rel_error, 0.0);
    // 13 bits lose far more than FP32; 25 bits about what FP32 does (below 1e-6).
    EXPECT_GT(plain[p].rel_error, 100 * fp32[p].rel_error);
    EXPECT_LT(b25[p].rel_error, 1e-6);
    // Whatever the accumulator, the E4M3 rounding (about 2^-4 per element) dominates what the
    // user sees on this zero-mean data.
    EXPECT_NEAR(plain[p].rel_error_unquantized, exact[p].rel_error_unquantized, 0.01);
  }
  // The 13-bit error grows with K (the running sum grows like sqrt(K) while every product keeps
  // 13 bits under it); promotion every 128 products keeps it flat.
  EXPECT_GT(plain[last].rel_error, 10 * plain[0].rel_error);
  EXPECT_LT(n128[last].rel_error, plain[last].rel_error / 10);
  EXPECT_LT(n128[last].rel_error, 2 * n128[0].rel_error);
}

}  // namespace
