// The steady-state rule (tcbench/numerics/steady_state.hpp) on NVML-like traces. Every trace here
// is generated (synthetic), read every 10 ms as the power sampler reads, with seeded noise. The
// settle follows what TileOPs published for cuBLAS GEMMs on an H200 (tile-ai/TileOPs,
// src/tileops/perf/profiles/h200.yaml, PR #1980): the board holds its 700 W cap and the SM clock
// settles at about 1.2-1.4 GHz, from a 1980 MHz boost.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <stdexcept>
#include <vector>

#include "tcbench/numerics/order_statistics.hpp"
#include "tcbench/numerics/random.hpp"
#include "tcbench/numerics/steady_state.hpp"

namespace tn = tcbench::numerics;

namespace {

constexpr double kPeriod = 0.010;  // the power sampler's period (tcbench/power.hpp)
constexpr double kLimitW = 700;    // the H200's power cap in the TileOPs runs
constexpr double kBoostMhz = 1980;
constexpr double kSettledMhz = 1300;  // the middle of the published 1.2-1.4 GHz
constexpr double kSettleS = 4.0;      // the synthetic settle: the clock stops falling here

// Seeded noise in [-1, 1): the project's one random source.
double noise(std::uint64_t seed, std::uint64_t i) {
  return tn::random_value(tn::Distribution::uniform(-1.0f, 1.0f), seed, i);
}

// A triangle wave in [-1, 1] with `period` seconds: the power limiter's clock oscillation.
double triangle(double t, double period) {
  const double phase = t / period - std::floor(t / period);
  return phase < 0.5 ? 4 * phase - 1 : 3 - 4 * phase;
}

using Shape = std::function<tn::ClockPowerReading(double t, std::uint64_t i)>;

std::vector<tn::ClockPowerReading> trace(double seconds, const Shape& at) {
  std::vector<tn::ClockPowerReading> out;
  for (std::uint64_t i = 0; static_cast<double>(i) * kPeriod <= seconds; ++i)
    out.push_back(at(static_cast<double>(i) * kPeriod, i));
  return out;
}

// Synthetic, published-like: power ramps to the cap in 0.3 s and stays there (+-1 %); the clock
// falls linearly from the boost to 1300 MHz by kSettleS, then oscillates +-100 MHz (1.2-1.4 GHz)
// with +-10 MHz of noise.
tn::ClockPowerReading h200_settle(double t, std::uint64_t i) {
  const double clock = t < 0.3 ? kBoostMhz
                       : t < kSettleS
                           ? kBoostMhz - (kBoostMhz - kSettledMhz) * (t - 0.3) / (kSettleS - 0.3)
                           : kSettledMhz + 100 * triangle(t, 0.5);
  const double power =
      t < 0.3 ? 120 + (kLimitW - 120) * t / 0.3 : kLimitW * (1 + 0.01 * noise(2, i));
  return {t, clock + 10 * noise(1, i), power};
}

TEST(SteadyState, FindsThePublishedLikeSettle) {
  const auto readings = trace(30, h200_settle);
  const tn::SteadyRule rule;  // 2 s windows, 1 % clock, 2 % power, 60 s
  const tn::SteadyVerdict v = tn::find_steady(readings, kLimitW, rule);
  ASSERT_TRUE(v.steady) << v.sentence;
  // The right moment: once the last window holds only settled readings (kSettleS + w), and no
  // later than the first moment both windows do (kSettleS + 2w), give or take one reading.
  EXPECT_GE(v.at_seconds, kSettleS + rule.window_seconds);
  EXPECT_LE(v.at_seconds, kSettleS + 2 * rule.window_seconds + kPeriod);
  EXPECT_EQ(v.check.power, tn::PowerCondition::at_limit);
  // What the window then says: the published band, within 1 % of the generator's level.
  EXPECT_GE(v.check.clock_mhz, 1200);
  EXPECT_LE(v.check.clock_mhz, 1400);
  EXPECT_NEAR(v.check.clock_mhz, kSettledMhz, 0.01 * kSettledMhz);
  EXPECT_EQ(v.sentence.rfind("steady after ", 0), 0u) << v.sentence;
  EXPECT_NE(v.sentence.find("at the 700 W limit"), std::string::npos) << v.sentence;
  // Power alone would have said "steady" at 4 s: the clock is what the rule waited for.
  EXPECT_GT(v.at_seconds, 2 * rule.window_seconds + 1.0);
}

TEST(SteadyState, ARampThatNeverSettlesIsNoSteadyState) {
  // Synthetic: the clock falls 1980 -> 1100 MHz over 60 s (about 1.5-2.6 % per 2 s) at the cap.
  const auto clock_ramp = trace(61, [](double t, std::uint64_t i) {
    return tn::ClockPowerReading{t, 1980 - 880 * t / 60 + 10 * noise(3, i),
                                 kLimitW * (1 + 0.01 * noise(4, i))};
  });
  const tn::SteadyRule rule;
  const tn::SteadyVerdict v = tn::find_steady(clock_ramp, kLimitW, rule);
  EXPECT_FALSE(v.steady);
  EXPECT_TRUE(v.check.judged);
  EXPECT_NEAR(v.at_seconds, 60, kPeriod);  // judged up to the limit, and no further
  EXPECT_EQ(v.sentence.rfind("no steady state within 60 s: the SM clock's median moved", 0), 0u)
      << v.sentence;

  // Synthetic: a clock held flat (locked) while the power climbs 200 -> 650 W (2.3-7.5 % per 2 s),
  // under the cap.
  const auto power_ramp = trace(61, [](double t, std::uint64_t i) {
    return tn::ClockPowerReading{t, 1755 + 2 * noise(5, i), 200 + 450 * t / 60};
  });
  const tn::SteadyVerdict p = tn::find_steady(power_ramp, kLimitW, rule);
  EXPECT_FALSE(p.steady);
  EXPECT_EQ(p.check.power, tn::PowerCondition::moving);
  EXPECT_NE(p.sentence.find("the power's median moved"), std::string::npos) << p.sentence;
  EXPECT_NE(p.sentence.find("from the 700 W limit"), std::string::npos) << p.sentence;

  // A shorter limit gives up sooner, and says so.
  tn::SteadyRule short_rule;
  short_rule.limit_seconds = 10;
  const tn::SteadyVerdict s = tn::find_steady(clock_ramp, kLimitW, short_rule);
  EXPECT_FALSE(s.steady);
  EXPECT_NEAR(s.at_seconds, 10, kPeriod);
  EXPECT_EQ(s.sentence.rfind("no steady state within 10 s", 0), 0u) << s.sentence;
}

// One reading replaced by a spike (a clock dip to 500 MHz and a 900 W power blip, as a 1 ms
// nvidia-smi trace of an H100 PCIe under a GEMM shows now and then).
std::vector<tn::ClockPowerReading> with_spike(std::vector<tn::ClockPowerReading> r, double t) {
  const auto i = static_cast<std::size_t>(std::lround(t / kPeriod));
  r.at(i).sm_clock_mhz = 500;
  r.at(i).power_w = 900;
  return r;
}

TEST(SteadyState, AOneReadingSpikeIsIgnored) {
  const auto clean = trace(30, h200_settle);
  const tn::SteadyRule rule;
  const double moment = tn::find_steady(clean, kLimitW, rule).at_seconds;
  // Wherever it falls around the moment (in either window, or on it), the moment stays within a
  // few readings: the spike moves a window's median by one rank, which can tip a comparison at
  // the 1 % edge one reading earlier or later. (A mean moves it by 0.4-0.7 s on these traces.)
  constexpr double kFewReadings = 0.1;
  for (double offset : {-3.0, -1.5, -0.5, 0.0}) {
    const tn::SteadyVerdict v = tn::find_steady(with_spike(clean, moment + offset), kLimitW, rule);
    EXPECT_TRUE(v.steady) << offset << ": " << v.sentence;
    EXPECT_NEAR(v.at_seconds, moment, kFewReadings) << "spike at " << offset << " s";
  }
  // Read every 50 ms (a slow NVML), a window holds 40 readings: a mean would move 1.5 % for the
  // dip, the median does not.
  std::vector<tn::ClockPowerReading> slow;
  for (std::size_t i = 0; i < clean.size(); i += 5) slow.push_back(clean[i]);
  const double slow_moment = tn::find_steady(slow, kLimitW, rule).at_seconds;
  for (double offset : {-3.0, -0.5, 0.0}) {
    auto spiked = slow;
    const auto i = static_cast<std::size_t>(std::lround((slow_moment + offset) / (5 * kPeriod)));
    spiked.at(i).sm_clock_mhz = 500;
    const tn::SteadyVerdict v = tn::find_steady(spiked, kLimitW, rule);
    EXPECT_NEAR(v.at_seconds, slow_moment, kFewReadings) << "spike at " << offset << " s";
  }
  // A flat trace with one spike is steady at the first moment the rule can judge (2 w).
  const auto flat = trace(10, [](double t, std::uint64_t i) {
    return tn::ClockPowerReading{t, kSettledMhz + 5 * noise(6, i), kLimitW + 3 * noise(7, i)};
  });
  const tn::SteadyVerdict f = tn::find_steady(with_spike(flat, 3.0), kLimitW, rule);
  EXPECT_TRUE(f.steady) << f.sentence;
  EXPECT_NEAR(f.at_seconds, 2 * rule.window_seconds, kPeriod);
  // ... and a spike back up to the boost clock does not make a falling clock steady.
  const auto ramp = trace(20, [](double t, std::uint64_t i) {
    return tn::ClockPowerReading{t, 1980 - 30 * t + 5 * noise(8, i), kLimitW};
  });
  EXPECT_FALSE(tn::find_steady(with_spike(ramp, 10.0), kLimitW, rule).steady);
}

TEST(SteadyState, BelowTheCapThePowerMustBeFlat) {
  // Synthetic, like an A100 PCIe at its 1410 MHz boost drawing 240 W under a 250 W limit: not at
  // the limit (4 % below it), but flat.
  const auto below = trace(10, [](double t, std::uint64_t i) {
    return tn::ClockPowerReading{t, 1410 + 3 * noise(9, i), 240 * (1 + 0.005 * noise(10, i))};
  });
  const tn::SteadyVerdict v = tn::find_steady(below, 250.0, tn::SteadyRule{});
  ASSERT_TRUE(v.steady) << v.sentence;
  EXPECT_EQ(v.check.power, tn::PowerCondition::flat);
  EXPECT_NE(v.sentence.find("the power flat at 240 W"), std::string::npos) << v.sentence;
  // Without a known limit only "flat" can hold; without power readings the clock decides alone.
  EXPECT_EQ(tn::find_steady(below, std::nullopt, tn::SteadyRule{}).check.power,
            tn::PowerCondition::flat);
  auto no_power = below;
  for (auto& r : no_power) r.power_w.reset();
  const tn::SteadyVerdict n = tn::find_steady(no_power, 250.0, tn::SteadyRule{});
  EXPECT_TRUE(n.steady);
  EXPECT_EQ(n.check.power, tn::PowerCondition::not_read);
  EXPECT_NE(n.sentence.find("the clock alone decided"), std::string::npos) << n.sentence;
}

TEST(SteadyState, TooFewReadingsAreNotJudged) {
  // Once a second (nvidia-smi's default loop): 2 readings per 2 s window, fewer than 5.
  std::vector<tn::ClockPowerReading> sparse;
  for (int s = 0; s <= 20; ++s) sparse.push_back({static_cast<double>(s), 1300.0, kLimitW});
  const tn::SteadyVerdict v = tn::find_steady(sparse, kLimitW, tn::SteadyRule{});
  EXPECT_FALSE(v.steady);
  EXPECT_FALSE(v.check.judged);
  EXPECT_EQ(v.sentence,
            "no steady state in the 20.0 s read (the limit is 60 s): fewer than 5 SM clock "
            "readings in a 2 s window (2, then 2)");
  // A clock NVML never read is never steady.
  auto no_clock = trace(10, h200_settle);
  for (auto& r : no_clock) r.sm_clock_mhz.reset();
  EXPECT_FALSE(tn::find_steady(no_clock, kLimitW, tn::SteadyRule{}).steady);
}

TEST(SteadyState, OneMomentAndBadInput) {
  const auto readings = trace(30, h200_settle);
  const tn::SteadyRule rule;
  // At 20 s: both windows settled; at 3 s: the clock is still falling.
  const tn::SteadyCheck late = tn::check_steady(readings, 20.0, kLimitW, rule);
  EXPECT_TRUE(late.judged && late.steady);
  const tn::SteadyCheck early = tn::check_steady(readings, 3.0, kLimitW, rule);
  EXPECT_TRUE(early.judged);
  EXPECT_FALSE(early.steady);
  EXPECT_NE(early.why_not.find("the SM clock's median moved"), std::string::npos);

  tn::SteadyRule bad = rule;
  bad.window_seconds = 0;
  EXPECT_TRUE(bad.why_invalid());
  EXPECT_THROW(tn::find_steady(readings, kLimitW, bad), std::invalid_argument);
  bad = rule;
  bad.limit_seconds = 3;  // shorter than two 2 s windows
  EXPECT_EQ(*bad.why_invalid(),
            "the limit, 3 s, is shorter than the two 2 s windows the rule "
            "compares");
  bad = rule;
  bad.clock_tolerance = -0.01;
  EXPECT_THROW(tn::check_steady(readings, 20.0, kLimitW, bad), std::invalid_argument);
  auto shuffled = readings;
  std::swap(shuffled[10], shuffled[20]);
  EXPECT_THROW(tn::find_steady(shuffled, kLimitW, rule), std::invalid_argument);
  EXPECT_FALSE(rule.why_invalid());
}

TEST(OrderStatistics, MedianAndPercentilesAsNumpy) {
  // numpy.median([3, 1, 2]) = 2; numpy.median([4, 1, 3, 2]) = 2.5;
  // numpy.percentile([1, 2, 3, 4, 10], [10, 90]) = [1.4, 7.6].
  EXPECT_DOUBLE_EQ(tn::median({3, 1, 2}), 2.0);
  EXPECT_DOUBLE_EQ(tn::median({4, 1, 3, 2}), 2.5);
  const std::vector<double> sorted = {1, 2, 3, 4, 10};
  EXPECT_DOUBLE_EQ(tn::percentile_of_sorted(sorted, 0.1), 1.4);
  EXPECT_DOUBLE_EQ(tn::percentile_of_sorted(sorted, 0.9), 7.6);
  EXPECT_THROW(tn::median({}), std::invalid_argument);
}

}  // namespace
