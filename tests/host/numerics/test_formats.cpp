// Formats: the CUDA conversions tcbench relies on, checked against an independent reference
// built from the format definitions alone (IEEE 754 binary16; bfloat16 = binary32's top half;
// E4M3FN/E5M2 per Micikevicius et al., arXiv:2209.05433, Table 1 and the OCP FP8 spec), and the
// tcbench wrappers (limits, scaled casts, classification, amax) checked against both.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "tcbench/numerics/formats.hpp"

namespace tn = tcbench::numerics;

namespace {

// A binary floating-point format described only by its field widths. Positive finite codes are
// 0..max_code, and their values increase with the code, so rounding is a search over a table.
struct RefFormat {
  int exp_bits;
  int man_bits;
  std::uint32_t max_code;  // largest positive finite code
  std::vector<double> values;

  RefFormat(int e, int m, std::uint32_t max) : exp_bits(e), man_bits(m), max_code(max) {
    const int bias = (1 << (e - 1)) - 1;
    for (std::uint32_t c = 0; c <= max; ++c) {
      const auto exp = static_cast<int>(c >> m);
      const double man = static_cast<double>(c & ((1u << m) - 1));
      values.push_back(exp == 0 ? std::ldexp(man, 1 - bias - m)
                                : std::ldexp(1.0 + std::ldexp(man, -m), exp - bias));
    }
  }

  // Round to nearest, ties to even (even code). Returns the rounded magnitude, or +inf when
  // the result is beyond max: IEEE's rule that a value at least max + ulp/2 (ties going to the
  // even neighbour) overflows, with max + ulp standing for the code after max.
  double round_magnitude(double a) const {
    const auto it = std::upper_bound(values.begin(), values.end(), a);
    const auto lo = static_cast<std::uint32_t>(it - values.begin()) - 1;
    if (values[lo] == a) return a;
    const std::uint32_t hi = lo + 1;
    const double hi_val =
        hi <= max_code ? values[hi] : values[max_code] + (values[max_code] - values[max_code - 1]);
    const double mid = (values[lo] + hi_val) / 2;
    std::uint32_t pick = a < mid ? lo : (a > mid ? hi : ((lo % 2 == 0) ? lo : hi));
    if (pick > max_code) return std::numeric_limits<double>::infinity();
    return values[pick];
  }

  // The value x takes in this format: NaN stays NaN, Inf stays Inf, overflow is +-Inf here and
  // mapped per format and saturation mode by the caller.
  double round(float x) const {
    if (std::isnan(x)) return std::numeric_limits<double>::quiet_NaN();
    if (std::isinf(x)) return static_cast<double>(x);
    const double r = round_magnitude(std::fabs(static_cast<double>(x)));
    return std::copysign(r, static_cast<double>(x));
  }
};

const RefFormat& ref_fp16() {
  static const RefFormat f(5, 10, 0x7BFF);
  return f;
}
const RefFormat& ref_bf16() {
  static const RefFormat f(8, 7, 0x7F7F);
  return f;
}
const RefFormat& ref_e4m3() {  // E4M3FN: S.1111.111 is NaN, so max is S.1111.110
  static const RefFormat f(4, 3, 0x7E);
  return f;
}
const RefFormat& ref_e5m2() {  // E5M2: S.11111.00 is Inf, so max is S.11110.11
  static const RefFormat f(5, 2, 0x7B);
  return f;
}

// What CUDA must return for x, per format and saturation mode: overflow is NaN for E4M3 without
// saturation (no Inf encoding), Inf for the others, and +-max with SATFINITE (which also maps an
// Inf input to +-max, per the PTX ISA's cvt .satfinite description).
double expected(float x, const RefFormat& f, bool e4m3, bool satfinite) {
  const double r = f.round(x);
  if (std::isnan(r)) return r;
  if (std::isinf(r)) {
    if (satfinite) return std::copysign(f.values[f.max_code], r);
    if (e4m3) return std::numeric_limits<double>::quiet_NaN();
  }
  return r;
}

bool same(double want, float got) {
  if (std::isnan(want)) return std::isnan(got);
  return static_cast<double>(got) == want && std::signbit(want) == std::signbit(got);
}

// Inputs: every fp16 bit pattern, every value and midpoint (and its float neighbours) of every
// format, the saturation limits, and a seeded sample of raw float bit patterns plus floats with
// exponents in the range where these formats live.
std::vector<float> test_inputs() {
  std::vector<float> in;
  for (std::uint32_t b = 0; b < 65536; ++b)
    in.push_back(__half2float(__ushort_as_half(static_cast<unsigned short>(b))));
  for (const RefFormat* f : {&ref_fp16(), &ref_bf16(), &ref_e4m3(), &ref_e5m2()}) {
    const auto& v = f->values;
    const double beyond = v.back() + (v.back() - v[v.size() - 2]);
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double next = i + 1 < v.size() ? v[i + 1] : beyond;
      for (double d : {v[i], (v[i] + next) / 2}) {
        const auto x = static_cast<float>(d);
        if (static_cast<double>(x) != d) continue;  // only exactly representable boundaries
        for (float y : {x, std::nextafter(x, 0.0f), std::nextafter(x, INFINITY)}) {
          in.push_back(y);
          in.push_back(-y);
        }
      }
    }
    for (double d : {2 * beyond, 1e30, static_cast<double>(FLT_MAX)}) {
      in.push_back(static_cast<float>(d));
      in.push_back(-static_cast<float>(d));
    }
  }
  for (float s : {INFINITY, -INFINITY, NAN, -NAN, 0.0f, -0.0f, FLT_MIN, FLT_TRUE_MIN})
    in.push_back(s);
  std::mt19937 rng(20240601);
  std::uniform_int_distribution<std::uint32_t> bits;
  for (int i = 0; i < (1 << 20); ++i) in.push_back(std::bit_cast<float>(bits(rng)));
  std::uniform_int_distribution<int> exps(-30, 20);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  for (int i = 0; i < (1 << 20); ++i) {
    const float x = std::ldexp(mant(rng), exps(rng));
    in.push_back(i % 2 ? x : -x);
  }
  return in;
}

const std::vector<float>& inputs() {
  static const std::vector<float> in = test_inputs();
  return in;
}

// The reference must itself be right before it can judge CUDA: spot values from the spec.
TEST(RefFormat, DecodesPublishedValues) {
  EXPECT_EQ(ref_e4m3().values.back(), 448.0);            // 1.75 * 2^8
  EXPECT_EQ(ref_e4m3().values[1], std::ldexp(1.0, -9));  // min subnormal
  EXPECT_EQ(ref_e4m3().values[8], std::ldexp(1.0, -6));  // min normal
  EXPECT_EQ(ref_e5m2().values.back(), 57344.0);          // 1.75 * 2^15
  EXPECT_EQ(ref_e5m2().values[1], std::ldexp(1.0, -16));
  EXPECT_EQ(ref_fp16().values.back(), 65504.0);
  EXPECT_EQ(ref_fp16().values[1], std::ldexp(1.0, -24));
  EXPECT_EQ(ref_bf16().values.back(), std::ldexp(255.0, 120));  // (2 - 2^-7) * 2^127
  EXPECT_EQ(ref_fp16().round(65519.0f), 65504.0);               // below max + ulp/2
  EXPECT_TRUE(std::isinf(ref_fp16().round(65520.0f)));          // the tie goes to the even "65536"
  EXPECT_EQ(ref_e4m3().round(464.0f), 448.0);                   // tie: 448 (code 0x7E) is even
  EXPECT_TRUE(std::isinf(ref_e5m2().round(61440.0f)));          // tie: 57344 (0x7B) is odd
  EXPECT_EQ(ref_fp16().round(std::ldexp(1.0f, -25)), 0.0);      // tie with 2^-24: to even 0
}

TEST(Limits, ConstantsMatchPublishedValues) {
  EXPECT_EQ(tn::limits(tn::Format::e4m3).max, 448.0f);
  EXPECT_EQ(tn::limits(tn::Format::e4m3).min_normal, std::ldexp(1.0f, -6));
  EXPECT_EQ(tn::limits(tn::Format::e4m3).min_subnormal, std::ldexp(1.0f, -9));
  EXPECT_EQ(tn::limits(tn::Format::e4m3).epsilon, 0.125f);
  EXPECT_EQ(tn::limits(tn::Format::e5m2).max, 57344.0f);
  EXPECT_EQ(tn::limits(tn::Format::e5m2).min_normal, std::ldexp(1.0f, -14));
  EXPECT_EQ(tn::limits(tn::Format::e5m2).min_subnormal, std::ldexp(1.0f, -16));
  EXPECT_EQ(tn::limits(tn::Format::e5m2).epsilon, 0.25f);
  EXPECT_EQ(tn::limits(tn::Format::fp16).max, 65504.0f);
  EXPECT_EQ(tn::limits(tn::Format::fp16).min_normal, std::ldexp(1.0f, -14));
  EXPECT_EQ(tn::limits(tn::Format::fp16).min_subnormal, std::ldexp(1.0f, -24));
  EXPECT_EQ(tn::limits(tn::Format::fp16).epsilon, std::ldexp(1.0f, -10));
  EXPECT_EQ(tn::limits(tn::Format::bf16).max, 3.38953139e38f);
  EXPECT_EQ(tn::limits(tn::Format::bf16).min_normal, FLT_MIN);  // BF16 shares FP32's exponent range
  EXPECT_EQ(tn::limits(tn::Format::bf16).min_subnormal, std::ldexp(1.0f, -133));
  EXPECT_EQ(tn::limits(tn::Format::bf16).epsilon, std::ldexp(1.0f, -7));
}

// Each constant is the value CUDA decodes from the corresponding bit pattern.
TEST(Limits, ConstantsMatchCudaDecoding) {
  auto e4 = [](unsigned c) {
    return tn::fp8_to_float(static_cast<__nv_fp8_storage_t>(c), tn::Fp8Format::e4m3);
  };
  auto e5 = [](unsigned c) {
    return tn::fp8_to_float(static_cast<__nv_fp8_storage_t>(c), tn::Fp8Format::e5m2);
  };
  auto h = [](unsigned b) {
    return __half2float(__ushort_as_half(static_cast<unsigned short>(b)));
  };
  auto bf = [](unsigned b) {
    return __bfloat162float(__ushort_as_bfloat16(static_cast<unsigned short>(b)));
  };
  EXPECT_EQ(e4(0x7E), tn::limits(tn::Format::e4m3).max);
  EXPECT_TRUE(std::isnan(e4(0x7F)));  // the code after max is NaN: no Inf in E4M3FN
  EXPECT_EQ(e4(0x08), tn::limits(tn::Format::e4m3).min_normal);
  EXPECT_EQ(e4(0x01), tn::limits(tn::Format::e4m3).min_subnormal);
  EXPECT_EQ(e4(0x39) - e4(0x38), tn::limits(tn::Format::e4m3).epsilon);
  EXPECT_EQ(e4(0x38), 1.0f);
  EXPECT_EQ(e5(0x7B), tn::limits(tn::Format::e5m2).max);
  EXPECT_TRUE(std::isinf(e5(0x7C)));
  EXPECT_EQ(e5(0x04), tn::limits(tn::Format::e5m2).min_normal);
  EXPECT_EQ(e5(0x01), tn::limits(tn::Format::e5m2).min_subnormal);
  EXPECT_EQ(e5(0x3D) - e5(0x3C), tn::limits(tn::Format::e5m2).epsilon);
  EXPECT_EQ(h(0x7BFF), tn::limits(tn::Format::fp16).max);
  EXPECT_EQ(h(0x0400), tn::limits(tn::Format::fp16).min_normal);
  EXPECT_EQ(h(0x0001), tn::limits(tn::Format::fp16).min_subnormal);
  EXPECT_EQ(h(0x3C01) - h(0x3C00), tn::limits(tn::Format::fp16).epsilon);
  EXPECT_EQ(bf(0x7F7F), tn::limits(tn::Format::bf16).max);
  EXPECT_EQ(bf(0x0080), tn::limits(tn::Format::bf16).min_normal);
  EXPECT_EQ(bf(0x0001), tn::limits(tn::Format::bf16).min_subnormal);
  EXPECT_EQ(bf(0x3F81) - bf(0x3F80), tn::limits(tn::Format::bf16).epsilon);
  EXPECT_EQ(tn::fp8_max(tn::Fp8Format::e4m3), 448.0f);
  EXPECT_EQ(tn::fp8_max(tn::Fp8Format::e5m2), 57344.0f);
}

TEST(Fp8Decode, EveryCodeMatchesTheSpec) {
  for (unsigned c = 0; c < 256; ++c) {
    const auto code = static_cast<__nv_fp8_storage_t>(c);
    const double sign = (c & 0x80) ? -1.0 : 1.0;
    const unsigned mag = c & 0x7F;
    const float e4 = tn::fp8_to_float(code, tn::Fp8Format::e4m3);
    if (mag == 0x7F)
      EXPECT_TRUE(std::isnan(e4)) << c;
    else
      EXPECT_TRUE(same(sign * ref_e4m3().values[mag], e4)) << c;
    const float e5 = tn::fp8_to_float(code, tn::Fp8Format::e5m2);
    if (mag == 0x7C)
      EXPECT_TRUE(std::isinf(e5) && std::signbit(e5) == (sign < 0)) << c;
    else if (mag > 0x7C)
      EXPECT_TRUE(std::isnan(e5)) << c;
    else
      EXPECT_TRUE(same(sign * ref_e5m2().values[mag], e5)) << c;
  }
}

// FP16 and BF16: CUDA's RNE conversions and tcbench's round_trip against the reference.
TEST(Conversions, Fp16AndBf16MatchReference) {
  std::size_t bad16 = 0, badbf = 0;
  for (float x : inputs()) {
    const double w16 = expected(x, ref_fp16(), false, false);
    if (!same(w16, __half2float(__float2half_rn(x))) ||
        !same(w16, tn::round_trip(x, tn::Format::fp16))) {
      if (++bad16 < 5) ADD_FAILURE() << "fp16 " << std::hexfloat << x << " want " << w16;
    }
    const double wbf = expected(x, ref_bf16(), false, false);
    if (!same(wbf, __bfloat162float(__float2bfloat16_rn(x))) ||
        !same(wbf, tn::round_trip(x, tn::Format::bf16))) {
      if (++badbf < 5) ADD_FAILURE() << "bf16 " << std::hexfloat << x << " want " << wbf;
    }
  }
  EXPECT_EQ(bad16, 0u);
  EXPECT_EQ(badbf, 0u);
}

// FP8 in both saturation modes: tcbench's scaled cast at scale 1 must equal
// __nv_cvt_float_to_fp8, and both must equal the reference.
TEST(Conversions, Fp8MatchesCudaAndReference) {
  struct Case {
    tn::Fp8Format f;
    const RefFormat* ref;
    tn::Saturation sat;
  };
  const Case cases[] = {{tn::Fp8Format::e4m3, &ref_e4m3(), tn::Saturation::none},
                        {tn::Fp8Format::e4m3, &ref_e4m3(), tn::Saturation::satfinite},
                        {tn::Fp8Format::e5m2, &ref_e5m2(), tn::Saturation::none},
                        {tn::Fp8Format::e5m2, &ref_e5m2(), tn::Saturation::satfinite}};
  for (const Case& c : cases) {
    const bool e4 = c.f == tn::Fp8Format::e4m3;
    const bool satf = c.sat == tn::Saturation::satfinite;
    std::size_t bad = 0;
    for (float x : inputs()) {
      const __nv_fp8_storage_t ours = tn::scaled_cast_fp8(x, 1.0f, c.f, c.sat);
      const __nv_fp8_storage_t cuda =
          __nv_cvt_float_to_fp8(x, satf ? __NV_SATFINITE : __NV_NOSAT, e4 ? __NV_E4M3 : __NV_E5M2);
      const double want = expected(x, *c.ref, e4, satf);
      const float got = tn::fp8_to_float(ours, c.f);
      const bool nan_ok = !std::isnan(x) || std::isnan(got);
      if (ours != cuda || !same(want, got) || !nan_ok) {
        if (++bad < 5)
          ADD_FAILURE() << (e4 ? "e4m3" : "e5m2") << (satf ? " satfinite " : " nosat ")
                        << std::hexfloat << x << " want " << want << " got " << got;
      }
      if (!satf && !std::isnan(x)) {
        const float rt = tn::round_trip(x, e4 ? tn::Format::e4m3 : tn::Format::e5m2);
        if (!same(want, rt) && ++bad < 5) ADD_FAILURE() << "round_trip " << std::hexfloat << x;
      }
    }
    EXPECT_EQ(bad, 0u);
  }
}

// With a power-of-two scale the product x * scale is exact, so the scaled cast must round
// exactly like the reference does x * scale; decoding with scale_inv then restores x within
// half an ulp of the format wherever x * scale is normal and in range.
TEST(ScaledCast, PowerOfTwoScalesAreExact) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-4.0f, 4.0f);
  for (int e = -12; e <= 12; e += 3) {
    const float scale = std::ldexp(1.0f, e);
    for (int i = 0; i < 20000; ++i) {
      const float x = u(rng);
      for (auto f : {tn::Fp8Format::e4m3, tn::Fp8Format::e5m2}) {
        const RefFormat& ref = f == tn::Fp8Format::e4m3 ? ref_e4m3() : ref_e5m2();
        const auto v = tn::scaled_cast_fp8(x, scale, f);
        ASSERT_TRUE(
            same(expected(x * scale, ref, f == tn::Fp8Format::e4m3, true), tn::fp8_to_float(v, f)))
            << x << " scale " << scale;
        const tn::FormatLimits lim = tn::limits(f);
        const float xs = std::fabs(x * scale);
        if (xs >= lim.min_normal && xs <= lim.max) {
          const float back = tn::scaled_decode_fp8(v, 1.0f / scale, f);
          EXPECT_LE(std::fabs(back - x), lim.epsilon / 2 * std::fabs(x)) << x;
        }
      }
    }
  }
}

TEST(ScaledCast, ArbitraryScaleRoundTripsWithinHalfUlp) {
  std::mt19937 rng(11);
  std::uniform_real_distribution<float> u(-1000.0f, 1000.0f);
  std::vector<float> xs(4096);
  for (float& x : xs) x = u(rng);
  const float a = tn::amax(xs);
  const float scale = 448.0f / a;  // current scaling: the largest value maps to E4M3's max
  for (float x : xs) {
    const float back = tn::scaled_decode_fp8(tn::scaled_cast_fp8(x, scale, tn::Fp8Format::e4m3),
                                             1.0f / scale, tn::Fp8Format::e4m3);
    // Half an ulp of the format plus a few float ulps for the scale's own rounding.
    if (std::fabs(x * scale) >= tn::limits(tn::Format::e4m3).min_normal) {
      EXPECT_LE(std::fabs(back - x), (0.0625f + 1e-6f) * std::fabs(x)) << x;
    }
  }
}

TEST(ScaledCast, SaturationVersusOverflow) {
  using tn::Fp8Format;
  using tn::Saturation;
  auto dec = [](__nv_fp8_storage_t v, Fp8Format f) { return tn::fp8_to_float(v, f); };
  // 500 > 448 + 16 (half an ulp at the top of E4M3).
  EXPECT_TRUE(std::isnan(
      dec(tn::scaled_cast_fp8(500.0f, 1.0f, Fp8Format::e4m3, Saturation::none), Fp8Format::e4m3)));
  EXPECT_EQ(dec(tn::scaled_cast_fp8(500.0f, 1.0f, Fp8Format::e4m3), Fp8Format::e4m3), 448.0f);
  EXPECT_EQ(dec(tn::scaled_cast_fp8(-1e9f, 1.0f, Fp8Format::e4m3), Fp8Format::e4m3), -448.0f);
  // The same value overflows only after scaling.
  EXPECT_EQ(
      dec(tn::scaled_cast_fp8(250.0f, 1.0f, Fp8Format::e4m3, Saturation::none), Fp8Format::e4m3),
      256.0f);
  EXPECT_TRUE(std::isnan(
      dec(tn::scaled_cast_fp8(250.0f, 2.0f, Fp8Format::e4m3, Saturation::none), Fp8Format::e4m3)));
  const float inf5 =
      dec(tn::scaled_cast_fp8(70000.0f, 1.0f, Fp8Format::e5m2, Saturation::none), Fp8Format::e5m2);
  EXPECT_TRUE(std::isinf(inf5) && inf5 > 0);
  EXPECT_EQ(dec(tn::scaled_cast_fp8(70000.0f, 1.0f, Fp8Format::e5m2), Fp8Format::e5m2), 57344.0f);
}

TEST(Classify, PublishedBoundaries) {
  using L = tn::Landing;
  using F = tn::Format;
  const float inf = INFINITY;
  // FP16 (IEEE binary16): normal from 2^-14, subnormal down to 2^-24, 2^-25 ties to 0.
  EXPECT_EQ(tn::classify(1.0f, F::fp16), L::normal);
  EXPECT_EQ(tn::classify(std::ldexp(1.0f, -14), F::fp16), L::normal);
  EXPECT_EQ(tn::classify(std::ldexp(1.0f, -15), F::fp16), L::subnormal);
  EXPECT_EQ(tn::classify(std::ldexp(1.0f, -24), F::fp16), L::subnormal);
  EXPECT_EQ(tn::classify(std::ldexp(1.0f, -25), F::fp16), L::flushed_to_zero);
  EXPECT_EQ(tn::classify(std::nextafter(std::ldexp(1.0f, -25), 1.0f), F::fp16), L::subnormal);
  EXPECT_EQ(tn::classify(-std::ldexp(1.0f, -30), F::fp16), L::flushed_to_zero);
  EXPECT_EQ(tn::classify(65504.0f, F::fp16), L::normal);
  EXPECT_EQ(tn::classify(65519.0f, F::fp16), L::normal);
  EXPECT_EQ(tn::classify(65520.0f, F::fp16), L::overflow);
  EXPECT_EQ(tn::classify(-1e5f, F::fp16), L::overflow);
  // A value just below min normal that rounds up to it is normal.
  EXPECT_EQ(tn::classify(std::nextafter(std::ldexp(1.0f, -14), 0.0f), F::fp16), L::normal);
  // BF16 keeps FP32's exponent range: 2^-30 is normal, only FP32-subnormal values are not.
  EXPECT_EQ(tn::classify(std::ldexp(1.0f, -30), F::bf16), L::normal);
  EXPECT_EQ(tn::classify(1e5f, F::bf16), L::normal);
  EXPECT_EQ(tn::classify(std::ldexp(1.0f, -130), F::bf16), L::subnormal);
  EXPECT_EQ(tn::classify(std::ldexp(1.0f, -134), F::bf16), L::flushed_to_zero);
  EXPECT_EQ(tn::classify(FLT_MAX, F::bf16), L::overflow);
  // E4M3: max 448 (464 ties back to 448), min normal 2^-6, min subnormal 2^-9.
  EXPECT_EQ(tn::classify(448.0f, F::e4m3), L::normal);
  EXPECT_EQ(tn::classify(464.0f, F::e4m3), L::normal);
  EXPECT_EQ(tn::classify(465.0f, F::e4m3), L::overflow);
  EXPECT_EQ(tn::classify(std::ldexp(1.0f, -6), F::e4m3), L::normal);
  EXPECT_EQ(tn::classify(std::ldexp(1.0f, -7), F::e4m3), L::subnormal);
  EXPECT_EQ(tn::classify(std::ldexp(1.0f, -9), F::e4m3), L::subnormal);
  EXPECT_EQ(tn::classify(std::ldexp(1.0f, -10), F::e4m3), L::flushed_to_zero);
  // E5M2: max 57344 (61440 ties up to the Inf code), min normal 2^-14, min subnormal 2^-16.
  EXPECT_EQ(tn::classify(57344.0f, F::e5m2), L::normal);
  EXPECT_EQ(tn::classify(61439.0f, F::e5m2), L::normal);
  EXPECT_EQ(tn::classify(61440.0f, F::e5m2), L::overflow);
  EXPECT_EQ(tn::classify(std::ldexp(1.0f, -15), F::e5m2), L::subnormal);
  EXPECT_EQ(tn::classify(std::ldexp(1.0f, -17), F::e5m2), L::flushed_to_zero);
  for (F f : {F::fp16, F::bf16, F::e4m3, F::e5m2}) {
    EXPECT_EQ(tn::classify(0.0f, f), L::zero);
    EXPECT_EQ(tn::classify(-0.0f, f), L::zero);
    EXPECT_EQ(tn::classify(inf, f), L::not_finite);
    EXPECT_EQ(tn::classify(NAN, f), L::not_finite);
  }
}

// Over the whole input set, the class follows from the reference's rounded value.
TEST(Classify, AgreesWithReferenceEverywhere) {
  struct Case {
    tn::Format f;
    const RefFormat* ref;
  };
  for (const Case& c : {Case{tn::Format::fp16, &ref_fp16()}, Case{tn::Format::bf16, &ref_bf16()},
                        Case{tn::Format::e4m3, &ref_e4m3()}, Case{tn::Format::e5m2, &ref_e5m2()}}) {
    const double min_normal = c.ref->values[std::size_t{1} << c.ref->man_bits];
    std::size_t bad = 0;
    for (float x : inputs()) {
      tn::Landing want;
      if (!std::isfinite(x))
        want = tn::Landing::not_finite;
      else if (x == 0.0f)
        want = tn::Landing::zero;
      else {
        const double r = std::fabs(c.ref->round(x));
        want = std::isinf(r)    ? tn::Landing::overflow
               : r == 0.0       ? tn::Landing::flushed_to_zero
               : r < min_normal ? tn::Landing::subnormal
                                : tn::Landing::normal;
      }
      if (tn::classify(x, c.f) != want && ++bad < 5)
        ADD_FAILURE() << tn::name(c.f) << " " << std::hexfloat << x << " want " << tn::name(want);
    }
    EXPECT_EQ(bad, 0u) << tn::name(c.f);
  }
}

TEST(Amax, Basics) {
  EXPECT_EQ(tn::amax({}), 0.0f);
  const std::vector<float> v{-3.0f, 2.0f, 0.5f};
  EXPECT_EQ(tn::amax(v), 3.0f);
  const std::vector<float> with_inf{1.0f, -INFINITY};
  EXPECT_TRUE(std::isinf(tn::amax(with_inf)));
  // NaN must reach the scaling logic (which then keeps its previous scale), whatever its place.
  const std::vector<float> nan_first{NAN, 1.0f}, nan_last{1.0f, NAN};
  EXPECT_TRUE(std::isnan(tn::amax(nan_first)));
  EXPECT_TRUE(std::isnan(tn::amax(nan_last)));
}

}  // namespace
