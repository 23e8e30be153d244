// Calibrators over histograms with a known answer. Histograms are built from exact expected
// counts (CDF differences), so the right amax is known in closed form:
//   uniform on [0, R]: every calibrator should keep (nearly) the whole range;
//   half-normal |N(0,1)|: the 99.99th percentile solves erf(x / sqrt 2) = 0.9999 (x ~ 3.8906);
//   Laplace(b = 1), |x| ~ Exp(1): percentile p at -ln(1 - p); MSE-optimal clip for 8 bits
//   minimizes 2 e^-a + (a / 127)^2 / 12 (clipping plus uniform rounding noise; Banner et al.,
//   "ACIQ", arXiv:1810.05723, derive the same form), about 9.88;
//   plus far outliers, which max follows and percentile ignores.
// Exactness against the reference: golden/calibration_golden.hpp holds seeded post-ReLU,
// heavy-tailed and outlier histograms with the amax that pytorch-quantization's algorithms
// (calib/histogram.py, re-implemented with numpy/scipy in golden/gen_calibration_golden.py)
// return; tcbench must return the same float.
#include <gtest/gtest.h>

#include <cmath>
#include <array>
#include <cstdint>
#include <functional>
#include <numbers>
#include <random>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "golden/calibration_golden.hpp"
#include "tcbench/numerics/calibration.hpp"

namespace tn = tcbench::numerics;

namespace {

// Expected counts of `total` samples of |x| with CDF `cdf` in each bin of h; the tail beyond
// the range goes into the last bin, as abs_histogram_bin does.
tn::AbsHistogram from_cdf(float range, double total, const std::function<double(double)>& cdf,
                          float max_seen) {
  tn::AbsHistogram h(range);
  std::vector<tn::HistCount> counts(static_cast<std::size_t>(h.num_bins()));
  for (int i = 0; i < h.num_bins(); ++i) {
    const double hi = i + 1 == h.num_bins() ? 1.0 : cdf(h.bin_upper(i));
    counts[static_cast<std::size_t>(i)] =
        static_cast<tn::HistCount>(std::llround(total * (hi - cdf(h.bin_lower(i)))));
  }
  h.add_counts(counts, max_seen);
  return h;
}

double half_normal_cdf(double x) {
  return std::erf(x / std::sqrt(2.0));
}
double exp_cdf(double x) {
  return 1.0 - std::exp(-x);
}

// Solves f(x) = y for increasing f by bisection.
double solve(const std::function<double(double)>& f, double y, double lo, double hi) {
  for (int i = 0; i < 200; ++i) {
    const double mid = (lo + hi) / 2;
    (f(mid) < y ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

TEST(AbsHistogramBin, EdgesAndSpecials) {
  EXPECT_EQ(tn::abs_histogram_bin(0.0f, 1.0f, 2048), 0);
  EXPECT_EQ(tn::abs_histogram_bin(-0.0f, 1.0f, 2048), 0);
  EXPECT_EQ(tn::abs_histogram_bin(0.5f, 1.0f, 2048), 1024);
  EXPECT_EQ(tn::abs_histogram_bin(-0.5f, 1.0f, 2048), 1024);
  EXPECT_EQ(tn::abs_histogram_bin(std::nextafter(0.5f, 0.0f), 1.0f, 2048), 1023);
  EXPECT_EQ(tn::abs_histogram_bin(1.0f, 1.0f, 2048), 2047);
  EXPECT_EQ(tn::abs_histogram_bin(1e30f, 1.0f, 2048), 2047);
  EXPECT_EQ(tn::abs_histogram_bin(NAN, 1.0f, 2048), -1);
  EXPECT_EQ(tn::abs_histogram_bin(-INFINITY, 1.0f, 2048), -1);
}

TEST(AbsHistogram, RejectsBadShapes) {
  EXPECT_THROW(tn::AbsHistogram{0.0f}, std::invalid_argument);
  EXPECT_THROW(tn::AbsHistogram{INFINITY}, std::invalid_argument);
  EXPECT_THROW((tn::AbsHistogram{1.0f, 0}), std::invalid_argument);
  tn::AbsHistogram a(1.0f), b(2.0f), c(1.0f, 1024);
  EXPECT_THROW(a.merge(b), std::invalid_argument);
  EXPECT_THROW(a.merge(c), std::invalid_argument);
}

TEST(AbsHistogram, MergeOfHalvesEqualsWhole) {
  std::mt19937 rng(5);
  std::normal_distribution<float> n(0.0f, 1.5f);
  std::vector<float> xs(200001);
  for (float& x : xs) x = n(rng);
  xs[77] = NAN;
  xs[78] = INFINITY;
  const std::span<const float> all(xs);
  tn::AbsHistogram whole(8.0f), first(8.0f), second(8.0f);
  whole.add(all);
  first.add(all.first(xs.size() / 2));
  second.add(all.subspan(xs.size() / 2));
  EXPECT_NE(first, whole);
  first.merge(second);
  EXPECT_EQ(first, whole);
  EXPECT_EQ(whole.total() + whole.non_finite(), xs.size());
  EXPECT_EQ(whole.non_finite(), 2u);
}

// A kernel fills a plain count array with abs_histogram_bin; add_counts must then agree with
// add() on the same data.
TEST(AbsHistogram, CountArrayPathMatchesHostFill) {
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> u(-3.0f, 3.0f);
  std::vector<float> xs(50000);
  for (float& x : xs) x = u(rng);
  tn::AbsHistogram host(2.0f), kernel_like(2.0f);
  host.add(xs);
  std::vector<tn::HistCount> counts(2048, 0);
  float mx = 0;
  for (float x : xs) {
    ++counts[static_cast<std::size_t>(tn::abs_histogram_bin(x, 2.0f, 2048))];
    mx = std::fmax(mx, std::fabs(x));
  }
  kernel_like.add_counts(counts, mx);
  EXPECT_EQ(host, kernel_like);
  EXPECT_EQ(host.counts()[2047], std::count_if(xs.begin(), xs.end(), [](float x) {
              return std::fabs(x) >= 2.0f - 2.0f / 2048;
            }));
}

TEST(Calibrate, MaxIsExact) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  std::vector<float> xs(100000);
  float want = 0;
  for (float& x : xs) {
    x = u(rng);
    want = std::fmax(want, std::fabs(x));
  }
  tn::AbsHistogram h(1.0f);
  h.add(xs);
  EXPECT_EQ(tn::calibrate_max(h), want);
  EXPECT_EQ(tn::calibrate(h, tn::Calibrator::max), want);
}

TEST(Calibrate, UniformKeepsTheRange) {
  // 1000 counts in each of 2048 bins over [0, 1]: a perfectly flat |x|.
  const tn::AbsHistogram h = from_cdf(
      1.0f, 2048000.0, [](double x) { return x; }, 1.0f);
  const double bin = 1.0 / 2048;
  EXPECT_EQ(tn::calibrate_max(h), 1.0f);
  EXPECT_NEAR(tn::calibrate_percentile(h), 0.9999, bin);
  // Entropy: only the full range leaves P undistorted (KL = 0); every shorter threshold piles
  // the clipped mass into one bin.
  EXPECT_EQ(tn::calibrate_entropy(h), 1.0f);
  const std::vector<double> kl = tn::entropy_divergences(h);
  ASSERT_EQ(kl.size(), 2048u - 128u + 1u);
  EXPECT_EQ(kl.back(), 0.0);
  EXPECT_GT(kl[kl.size() - 2], 0.0);
  // MSE: for flat data the clipping error (1 - a)^3 / 3 balances rounding noise
  // a^3 / (12 * 127^2) at a = 254 / 255 of the range [derived], i.e. 8 bins below max.
  const float mse = tn::calibrate_mse(h);
  EXPECT_NEAR(mse, 254.0 / 255.0, 2 * bin);
  EXPECT_LT(mse, 1.0f);
}

TEST(Calibrate, GaussianPercentileWithinOneBin) {
  const float range = 8.0f;
  const tn::AbsHistogram h = from_cdf(range, 1e10, half_normal_cdf, range);
  const double bin = range / 2048.0;
  for (double p : {99.0, 99.9, 99.99}) {
    const double want = solve(half_normal_cdf, p / 100, 0.0, 10.0);
    EXPECT_NEAR(tn::calibrate_percentile(h, p), want, bin) << p;
  }
  EXPECT_NEAR(solve(half_normal_cdf, 0.9999, 0.0, 10.0), 3.8906, 1e-4);  // sanity of the oracle
  const float mse = tn::calibrate_mse(h);
  // MSE-optimal clip of N(0,1) for 8 bits: minimize the clipping error
  // 2 [(1 + a^2) Q(a) - a phi(a)] plus rounding noise (a / 127)^2 / 12 [derived; ACIQ's form].
  auto dmse = [](double a) {
    const double q = 0.5 * std::erfc(a / std::sqrt(2.0));
    const double phi = std::exp(-a * a / 2) / std::sqrt(2 * std::numbers::pi);
    // derivative of the clipping term is -4 (a Q(a) - phi(a)); of the noise term a / (6 127^2)
    return a / (6.0 * 127 * 127) - 4 * (phi - a * q);
  };
  const double opt = solve(dmse, 0.0, 1.0, 7.0);
  EXPECT_NEAR(opt, 3.92, 0.01);
  EXPECT_NEAR(mse, opt, 0.03 * opt);
}

TEST(Calibrate, LaplaceMseMatchesAnalyticOptimum) {
  const float range = 32.0f;
  const tn::AbsHistogram h = from_cdf(range, 1e10, exp_cdf, range);
  // d/da [2 e^-a + a^2 / (12 * 127^2)] = 0  <=>  a / (6 * 127^2) = 2 e^-a
  const double opt =
      solve([](double a) { return a / (6.0 * 127 * 127) - 2 * std::exp(-a); }, 0.0, 1.0, 30.0);
  EXPECT_NEAR(opt, 9.88, 0.01);
  EXPECT_NEAR(tn::calibrate_mse(h), opt, 0.03 * opt);
  EXPECT_NEAR(tn::calibrate_percentile(h, 99.99), -std::log(1e-4), range / 2048.0);
}

TEST(Calibrate, OutliersMoveMaxButNotPercentile) {
  // Laplace bulk (10^8 samples) plus 100 samples at |x| = 100, range 128.
  const float range = 128.0f;
  tn::AbsHistogram h = from_cdf(range, 1e8, exp_cdf, 30.0f);
  std::vector<float> outliers(100, 100.0f);
  h.add(outliers);
  EXPECT_EQ(tn::calibrate_max(h), 100.0f);
  const float pct = tn::calibrate_percentile(h, 99.99);
  EXPECT_NEAR(pct, -std::log(1e-4), range / 2048.0);  // 10^-6 outliers do not move p99.99
}

// The golden cases: seeded draws, 2048 bins over [0, max|x|], amax from pytorch-quantization's
// algorithms. Equality is exact (same float), not a tolerance.
struct GoldenCase {
  const char* name;
  float range_max;
  const std::array<std::uint64_t, 2048>* counts;
  float entropy, entropy_without_zero_bin_fix, mse;
  std::span<const tcbench_golden::PercentileGolden> percentiles;
  std::span<const tcbench_golden::KlSample> kl;
};

#define TCB_GOLDEN_CASE(ns)                                                                    \
  GoldenCase {                                                                                 \
#ns, tcbench_golden::ns::kRangeMax, &tcbench_golden::ns::kCounts,                          \
        tcbench_golden::ns::kEntropyAmax, tcbench_golden::ns::kEntropyAmaxWithoutZeroBinFix,   \
        tcbench_golden::ns::kMseAmax, tcbench_golden::ns::kPercentile, tcbench_golden::ns::kKl \
  }

class CalibrateGolden : public ::testing::TestWithParam<GoldenCase> {
 protected:
  static tn::AbsHistogram histogram(const GoldenCase& g) {
    tn::AbsHistogram h(g.range_max);
    const std::vector<tn::HistCount> counts(g.counts->begin(), g.counts->end());
    h.add_counts(counts, g.range_max);
    return h;
  }
};

TEST_P(CalibrateGolden, EntropyEqualsPytorchQuantization) {
  const GoldenCase& g = GetParam();
  const tn::AbsHistogram h = histogram(g);
  EXPECT_EQ(tn::calibrate_entropy(h), g.entropy);
  EXPECT_EQ(tn::calibrate(h, tn::Calibrator::entropy), g.entropy);
  EXPECT_EQ(tn::calibrate_entropy(h, {.replace_zero_bin = false}), g.entropy_without_zero_bin_fix);
  const std::vector<double> kl = tn::entropy_divergences(h);
  for (const auto& s : g.kl) {
    const double got = kl[static_cast<std::size_t>(s.candidate_bins - 128)];
    if (std::isinf(s.kl))
      EXPECT_TRUE(std::isinf(got)) << s.candidate_bins;
    else
      EXPECT_NEAR(got, s.kl, 1e-12 * (1 + s.kl)) << s.candidate_bins;
  }
}

TEST_P(CalibrateGolden, PercentileEqualsPytorchQuantization) {
  const GoldenCase& g = GetParam();
  const tn::AbsHistogram h = histogram(g);
  for (const auto& p : g.percentiles) {
    EXPECT_EQ(tn::calibrate_percentile(h, p.percentile), p.amax) << p.percentile;
    EXPECT_EQ(p.amax, static_cast<float>(h.bin_lower(p.bin))) << "lower edge of bin " << p.bin;
  }
}

TEST_P(CalibrateGolden, MseEqualsPytorchQuantization) {
  const GoldenCase& g = GetParam();
  EXPECT_EQ(tn::calibrate_mse(histogram(g)), g.mse);
}

INSTANTIATE_TEST_SUITE_P(Histograms, CalibrateGolden,
                         ::testing::Values(TCB_GOLDEN_CASE(post_relu),
                                           TCB_GOLDEN_CASE(heavy_tailed),
                                           TCB_GOLDEN_CASE(outliers)),
                         [](const auto& test_info) { return std::string(test_info.param.name); });

// Why the zero-bin replacement matters: on post-ReLU data (about half the values exactly 0)
// the unreplaced spike pulls the KL minimum to well under half the amax pytorch-quantization
// chooses, clipping real signal.
TEST(Calibrate, PostReluZeroSpikeWouldClipRealSignal) {
  namespace g = tcbench_golden::post_relu;
  EXPECT_GT(g::kCounts[0], g::kCounts[1] * 100);  // the spike is really there
  EXPECT_LT(g::kEntropyAmaxWithoutZeroBinFix * 2, g::kEntropyAmax);
}

TEST(Calibrate, EmptyAllZeroAndNonFiniteAreClearErrors) {
  tn::AbsHistogram empty(1.0f);
  EXPECT_THROW(tn::calibrate_max(empty), std::invalid_argument);
  EXPECT_THROW(tn::calibrate_percentile(empty), std::invalid_argument);
  EXPECT_THROW(tn::calibrate_entropy(empty), std::invalid_argument);
  EXPECT_THROW(tn::calibrate_mse(empty), std::invalid_argument);
  // Only NaN/Inf: counted apart, and still nothing to calibrate.
  tn::AbsHistogram only_bad(1.0f);
  const std::vector<float> bad{NAN, INFINITY, -INFINITY};
  only_bad.add(bad);
  EXPECT_EQ(only_bad.non_finite(), 3u);
  EXPECT_EQ(only_bad.total(), 0u);
  try {
    tn::calibrate_max(only_bad);
    ADD_FAILURE() << "no throw";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("3 NaN/Inf"), std::string::npos) << e.what();
  }
  tn::AbsHistogram zeros(1.0f);
  const std::vector<float> zs(1000, 0.0f);
  zeros.add(zs);
  for (auto c : {tn::Calibrator::max, tn::Calibrator::percentile, tn::Calibrator::entropy,
                 tn::Calibrator::mse})
    EXPECT_THROW(tn::calibrate(zeros, c), std::invalid_argument) << tn::name(c);
  for (double p : {0.0, -1.0, 100.5, double(NAN)})
    EXPECT_THROW(tn::calibrate_percentile(zeros, p), std::invalid_argument) << p;
}

TEST(Calibrate, NonFiniteSamplesNeverMoveTheAmax) {
  std::mt19937 rng(3);
  std::normal_distribution<float> n(0.0f, 1.0f);
  std::vector<float> xs(100000);
  for (float& x : xs) x = n(rng);
  tn::AbsHistogram clean(6.0f), dirty(6.0f);
  clean.add(xs);
  xs.insert(xs.end(), {NAN, INFINITY, -INFINITY, NAN});
  dirty.add(xs);
  EXPECT_EQ(dirty.non_finite(), 4u);
  for (auto c : {tn::Calibrator::max, tn::Calibrator::percentile, tn::Calibrator::entropy,
                 tn::Calibrator::mse})
    EXPECT_EQ(tn::calibrate(clean, c), tn::calibrate(dirty, c)) << tn::name(c);
}

TEST(Calibrate, BadOptions) {
  tn::AbsHistogram small(1.0f, 64);
  const std::vector<float> xs{0.5f};
  small.add(xs);
  EXPECT_THROW(tn::calibrate_entropy(small), std::invalid_argument);  // start bin 128 > 64
  // One sample in bin 32: every threshold above it reproduces P exactly (KL = 0), every one at
  // or below it loses it; among the ties the largest threshold wins (the range, 1.0).
  const tn::EntropyOptions opt{.start_bin = 8, .stride = 1, .num_levels = 4};
  EXPECT_EQ(tn::calibrate_entropy(small, opt), 1.0f);
  const std::vector<double> kl = tn::entropy_divergences(small, opt);
  EXPECT_TRUE(std::isinf(kl[32 - 8]));  // threshold 32 bins: the sample is folded, Q is empty
  EXPECT_EQ(kl[33 - 8], 0.0);
  // Everything in bin 0, which the entropy method replaces: nothing left to search.
  tn::AbsHistogram tiny(1.0f);
  const std::vector<float> t{1e-6f, 2e-6f};
  tiny.add(t);
  EXPECT_THROW(tn::calibrate_entropy(tiny), std::invalid_argument);
}

}  // namespace
