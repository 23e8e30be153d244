// The accumulator bit detection (accumulator_probes.hpp) on the emulator (tensor_accumulator.hpp):
// the estimator recovers every model it claims to tell apart, from that model's own outputs,
// and refuses outputs it cannot explain or cannot tell apart. The emulator itself is checked
// on cases worked by hand from the published observations it models.
#include "tcbench/numerics/accumulator_probes.hpp"
#include "tcbench/numerics/narrow_formats.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace tcbench::numerics {
namespace {

const AccumulatorProbes& e4m3_probes() {
  static const AccumulatorProbes p = make_accumulator_probes(Element::e4m3);
  return p;
}

AccumulatorEstimate estimate(const AccumulatorModel& m) {
  return estimate_accumulator(e4m3_probes(), emulate_probes(e4m3_probes(), m));
}

float round_trip_as(float x, Element e) {
  switch (e) {
    case Element::fp16:
      return __half2float(__float2half_rn(x));
    case Element::bf16:
      return __bfloat162float(__float2bfloat16_rn(x));
    case Element::e5m2:
      return round_trip(x, ElementFormat::e5m2);
    default:
      return round_trip(x, ElementFormat::e4m3);
  }
}

// ---- the emulator, by hand --------------------------------------------------------------------

float dot(const AccumulatorModel& m, const std::vector<double>& products) {
  return emulate_dot(
      m, [&](int i) { return products[static_cast<std::size_t>(i)]; },
      static_cast<int>(products.size()));
}

TEST(AccumulatorEmulator, KeepsFractionBitsUnderTheLargestAddend) {
  const AccumulatorModel m{13, AccRounding::truncate, 32, 0};
  EXPECT_EQ(dot(m, {1.0, std::ldexp(1.0, -13)}), 1.0f + std::ldexp(1.0f, -13));
  EXPECT_EQ(dot(m, {1.0, std::ldexp(1.0, -14)}), 1.0f);
  // 0.75 ulp: truncated, whatever the rounding of the sum (alignment drops toward zero).
  EXPECT_EQ(dot({13, AccRounding::nearest_even, 32, 0}, {1.0, 0.75 * std::ldexp(1.0, -13)}), 1.0f);
  // Beside a small largest addend the same product survives.
  EXPECT_EQ(dot(m, {0.5, std::ldexp(1.0, -14)}), 0.5f + std::ldexp(1.0f, -14));
}

TEST(AccumulatorEmulator, TruncatesTheRunningSumEveryStepAsSageAttention2Observed) {
  // SageAttention2 (arXiv 2411.10958): with A = B = 0, an FP32 accumulator D of more than 13
  // mantissa bits comes back with its low 10 bits zeroed. Here: the running sum after one
  // step holds 1 + 2^-23 only if it survives the next step's alignment.
  const double d = 1.0 + std::ldexp(1.0, -20);  // needs 20 fraction bits
  AccumulatorState s;
  s.acc = d;
  const AccumulatorModel m{13, AccRounding::truncate, 32, 0};
  accumulate(
      s, m, [](int) { return 0.0; }, 32);
  EXPECT_EQ(accumulated_value(s, m), 1.0f);
  s.acc = d;
  accumulate(
      s, {23, AccRounding::truncate, 32, 0}, [](int) { return 0.0; }, 32);
  EXPECT_EQ(s.acc, d);
}

TEST(AccumulatorEmulator, RoundsTheCarryOutByTheModelsRounding) {
  // 2^-w + 2^-(w - 1) + 1 + 1 = 2 + 1.5 ulp of 2 at w fraction bits.
  const int w = 13;
  const std::vector<double> p{std::ldexp(1.0, -w), std::ldexp(1.0, 1 - w), 1.0, 1.0};
  const float ulp = std::ldexp(1.0f, 1 - w);
  EXPECT_EQ(dot({w, AccRounding::truncate, 32, 0}, p), 2.0f + ulp);
  EXPECT_EQ(dot({w, AccRounding::floor, 32, 0}, p), 2.0f + ulp);
  EXPECT_EQ(dot({w, AccRounding::nearest_even, 32, 0}, p), 2.0f + 2 * ulp);
  // Negative: toward zero keeps the magnitude down, floor pushes it up.
  const std::vector<double> n{-p[0], -p[1], -1.0, -1.0};
  EXPECT_EQ(dot({w, AccRounding::truncate, 32, 0}, n), -(2.0f + ulp));
  EXPECT_EQ(dot({w, AccRounding::floor, 32, 0}, n), -(2.0f + 2 * ulp));
}

TEST(AccumulatorEmulator, FloorDropsANegativeSmallProductToMinusOneQuantum) {
  const std::vector<double> p{1.0, -std::ldexp(1.0, -20)};
  EXPECT_EQ(dot({13, AccRounding::truncate, 32, 0}, p), 1.0f);
  EXPECT_EQ(dot({13, AccRounding::floor, 32, 0}, p), 1.0f - std::ldexp(1.0f, -13));
}

TEST(AccumulatorEmulator, PromotionStartsAFreshAccumulator) {
  // 1, then 32 products of 2^-16: beside 1 each is dropped at 13 bits; after a promotion at 32
  // they sum exactly to 2^-11 and are added in FP32.
  std::vector<double> p(64, std::ldexp(1.0, -16));
  p[0] = 1.0;
  for (int i = 1; i < 32; ++i) p[static_cast<std::size_t>(i)] = 0.0;
  EXPECT_EQ(dot({13, AccRounding::truncate, 32, 0}, p), 1.0f);
  EXPECT_EQ(dot({13, AccRounding::truncate, 32, 32}, p), 1.0f + std::ldexp(1.0f, -11));
  // A step that ends before the last product: the last group is added at the end.
  EXPECT_EQ(dot({13, AccRounding::truncate, 32, 32}, {1.0}), 1.0f);
}

TEST(AccumulatorEmulator, KeepsTheOldAlignedTruncatedSum) {
  const std::vector<double> addends{2047, 2};
  EXPECT_EQ(aligned_truncated_sum(addends, 10), 2048.0);
  EXPECT_EQ(aligned_truncated_sum(addends, 11), 2049.0);
}

TEST(AccumulatorEmulator, RefusesAModelItCannotEmulate) {
  EXPECT_TRUE(why_invalid({13, AccRounding::truncate, 32, 48}).has_value());
  EXPECT_TRUE(why_invalid({13, AccRounding::truncate, 0, 0}).has_value());
  EXPECT_TRUE(why_invalid({41, AccRounding::truncate, 32, 0}).has_value());
  EXPECT_FALSE(why_invalid({13, AccRounding::truncate, 32, 128}).has_value());
  EXPECT_THROW(emulate_probes(e4m3_probes(), {13, AccRounding::truncate, 32, 48}),
               std::invalid_argument);
}

// ---- the probes -------------------------------------------------------------------------------

TEST(AccumulatorProbes, EveryInputIsExactInItsFormatAndNormal) {
  for (Element e : {Element::e4m3, Element::e5m2, Element::fp16, Element::bf16}) {
    const AccumulatorProbes p = make_accumulator_probes(e);
    ASSERT_EQ(p.a.size(), p.probes.size() * static_cast<std::size_t>(p.length));
    for (std::size_t i = 0; i < p.a.size(); ++i) {
      ASSERT_EQ(round_trip_as(p.a[i], e), p.a[i]) << name(e) << " a[" << i << "]";
      ASSERT_EQ(round_trip_as(p.b[i], e), p.b[i]) << name(e) << " b[" << i << "]";
      if (p.a[i] == 0) continue;
      ASSERT_GE(std::fabs(p.a[i]), element_info(e).min_normal) << "normal values only";
      ASSERT_GE(std::fabs(p.b[i]), element_info(e).min_normal) << "normal values only";
    }
    for (std::size_t i = 0; i < p.probes.size(); ++i)
      for (int k = p.probes[i].used; k < p.length; ++k) ASSERT_EQ(p.product(i, k), 0.0);
  }
}

TEST(AccumulatorProbes, SweepTheSmallProductsPositionAroundTheLargeOne) {
  const AccumulatorProbes& p = e4m3_probes();
  int before = 0, after = 0;
  for (std::size_t i = 0; i < p.probes.size(); ++i) {
    const AccumulatorProbe& probe = p.probes[i];
    const double large = std::ldexp(1.0, p.large_exponent);
    if (probe.kind == ProbeKind::before_large) {
      ++before;
      EXPECT_EQ(p.product(i, probe.position), large);
      EXPECT_EQ(p.product(i, 0), std::ldexp(large, -probe.t));
    } else if (probe.kind == ProbeKind::after_large) {
      ++after;
      EXPECT_EQ(p.product(i, 0), large);
      EXPECT_EQ(p.product(i, probe.position + probe.count - 1), std::ldexp(large, -probe.t));
      EXPECT_EQ(p.product(i, probe.position + probe.count), 0.0);
    }
  }
  // 4 to 26 bits; L at 2 to 256 (from the small products' count on), small ones at 16 to 512.
  EXPECT_EQ(before, 19 * 8 + 8 + 7 + 6 + 5);
  EXPECT_EQ(after, 23 * 6);
}

TEST(AccumulatorProbes, BytesAreTheFormatsCodesAndRefuseAnInexactValue) {
  const std::vector<float> v{1.0f, -0.5f, 448.0f};
  // E4M3: 1.0 = 0x38, -0.5 = 0xB0, 448 = 0x7E (OCP FP8; element.hpp's table).
  EXPECT_EQ(exact_bytes(Element::e4m3, v), (std::vector<std::uint8_t>{0x38, 0xB0, 0x7E}));
  // FP16, little-endian: 1.0 = 0x3C00, -0.5 = 0xB800, 448 = 0x5F00.
  EXPECT_EQ(exact_bytes(Element::fp16, v),
            (std::vector<std::uint8_t>{0x00, 0x3C, 0x00, 0xB8, 0x00, 0x5F}));
  // BF16: the top half of FP32: 1.0 = 0x3F80, -0.5 = 0xBF00, 448 = 0x43E0.
  EXPECT_EQ(exact_bytes(Element::bf16, v),
            (std::vector<std::uint8_t>{0x80, 0x3F, 0x00, 0xBF, 0xE0, 0x43}));
  EXPECT_THROW(exact_bytes(Element::e4m3, std::vector<float>{1.1f}), std::invalid_argument);
  EXPECT_THROW(exact_bytes(Element::int8, v), std::invalid_argument);
}

TEST(AccumulatorProbes, RefuseALengthOrFormatTheyCannotBuild) {
  EXPECT_THROW(make_accumulator_probes(Element::e4m3, 512), std::invalid_argument);
  EXPECT_THROW(make_accumulator_probes(Element::e4m3, 1000), std::invalid_argument);
  EXPECT_THROW(make_accumulator_probes(Element::int8), std::invalid_argument);
}

// ---- the estimator ----------------------------------------------------------------------------

TEST(AccumulatorEstimator, RecoversEveryFractionWidthFrom10To24InEveryRounding) {
  // Steps of 8, 16 or 32 products, with and without promotion every 128, in turn.
  for (AccRounding r : kAccRoundings)
    for (int bits = 10; bits <= 24; ++bits) {
      const AccumulatorModel m{bits, r, 8 << (bits % 3), bits % 2 == 0 ? 0 : 128};
      const AccumulatorEstimate e = estimate(m);
      ASSERT_FALSE(e.refused) << bits << " " << name(r) << ": " << e.reason;
      EXPECT_EQ(e.fraction_bits, bits) << name(r);
      EXPECT_FALSE(e.at_least);
      EXPECT_EQ(e.rounding, r) << bits;
      EXPECT_EQ(e.block, m.block) << bits << " " << name(r) << ": " << e.describe();
      EXPECT_EQ(e.promotion, m.promotion) << bits << " " << name(r) << ": " << e.describe();
    }
}

TEST(AccumulatorEstimator, RecoversTheStepPromotionAndFloorRounding) {
  const AccumulatorModel models[] = {
      {13, AccRounding::truncate, 32, 128},  // DeepSeek-V3's promotion every N_C = 128
      {13, AccRounding::floor, 16, 0},         {25, AccRounding::truncate, 32, 0},
      {25, AccRounding::nearest_even, 32, 64}, {26, AccRounding::floor, 32, 512},
      {6, AccRounding::nearest_even, 4, 16}};
  for (const AccumulatorModel& m : models) {
    const AccumulatorEstimate e = estimate(m);
    ASSERT_FALSE(e.refused) << e.reason;
    EXPECT_EQ(e.fraction_bits, m.fraction_bits);
    EXPECT_EQ(e.rounding, m.rounding) << e.describe();
    EXPECT_EQ(e.block, m.block) << e.describe();
    EXPECT_EQ(e.promotion, m.promotion) << e.describe();
  }
}

TEST(AccumulatorEstimator, SaysAtLeastWhereTheProbesStop) {
  // FP32-wide and wider alignment (a control path): 27 or more, the rounding still told.
  for (int bits : {27, 30, 40}) {
    const AccumulatorEstimate e = estimate({bits, AccRounding::nearest_even, 32, 0});
    ASSERT_FALSE(e.refused) << e.reason;
    EXPECT_EQ(e.fraction_bits, kMaxProbedBits);
    EXPECT_TRUE(e.at_least);
    EXPECT_EQ(e.rounding, AccRounding::nearest_even);
    EXPECT_NE(e.describe().find("at least 27"), std::string::npos) << e.describe();
  }
}

TEST(AccumulatorEstimator, SaysWhatTheProbesCannotTell) {
  // Rounding every step's sum to nearest hides single products of 2^-26 L next to L: with
  // 25 bits, steps of 4 and of 8 products look alike.
  const AccumulatorEstimate e = estimate({25, AccRounding::nearest_even, 8, 0});
  ASSERT_FALSE(e.refused) << e.reason;
  EXPECT_EQ(e.fraction_bits, 25);
  EXPECT_EQ(e.promotion, 0);
  EXPECT_FALSE(e.block.has_value()) << e.describe();
  EXPECT_EQ(e.blocks, (std::vector<int>{4, 8}));
  EXPECT_NE(e.describe().find("cannot tell"), std::string::npos);
}

TEST(AccumulatorEstimator, RefusesOutputsNoModelExplains) {
  // An IEEE FP32 accumulation, one product at a time (rounds each sum to nearest: not the
  // tensor-core model, whose alignment drops bits).
  const AccumulatorProbes& p = e4m3_probes();
  std::vector<float> ieee(p.probes.size());
  for (std::size_t i = 0; i < ieee.size(); ++i) {
    float acc = 0;
    for (int k = 0; k < p.length; ++k) acc += static_cast<float>(p.product(i, k));
    ieee[i] = acc;
  }
  const AccumulatorEstimate e = estimate_accumulator(p, ieee);
  EXPECT_TRUE(e.refused);
  EXPECT_NE(e.reason.find("no accumulator model"), std::string::npos) << e.reason;
  EXPECT_NE(e.reason.find("closest model"), std::string::npos) << e.reason;
}

TEST(AccumulatorEstimator, RefusesToGuessWhenTheProbesCannotTellTheBits) {
  // Without the many_small probes nothing shows whether a 25-bit path keeps 23, 24, ... bits.
  AccumulatorProbes p = e4m3_probes();
  AccumulatorProbes cut = p;
  cut.probes.clear();
  cut.a.clear();
  cut.b.clear();
  const auto n = static_cast<std::size_t>(p.length);
  for (std::size_t i = 0; i < p.probes.size(); ++i) {
    if (p.probes[i].kind == ProbeKind::many_small || p.probes[i].t > kFp32FractionBits) continue;
    cut.probes.push_back(p.probes[i]);
    cut.a.insert(cut.a.end(), p.a.begin() + static_cast<long>(i * n),
                 p.a.begin() + static_cast<long>((i + 1) * n));
    cut.b.insert(cut.b.end(), p.b.begin() + static_cast<long>(i * n),
                 p.b.begin() + static_cast<long>((i + 1) * n));
  }
  const AccumulatorEstimate e =
      estimate_accumulator(cut, emulate_probes(cut, {25, AccRounding::truncate, 32, 0}));
  EXPECT_TRUE(e.refused);
  EXPECT_NE(e.reason.find("cannot tell the fraction bits apart"), std::string::npos) << e.reason;
}

TEST(AccumulatorEstimator, RefusesNonFiniteOutputsAndAMiscount) {
  std::vector<float> r = emulate_probes(e4m3_probes(), {13, AccRounding::truncate, 32, 0});
  r[3] = NAN;
  const AccumulatorEstimate e = estimate_accumulator(e4m3_probes(), r);
  EXPECT_TRUE(e.refused);
  EXPECT_NE(e.reason.find("not a finite number"), std::string::npos) << e.reason;
  r.pop_back();
  EXPECT_THROW(estimate_accumulator(e4m3_probes(), r), std::invalid_argument);
}

}  // namespace
}  // namespace tcbench::numerics
