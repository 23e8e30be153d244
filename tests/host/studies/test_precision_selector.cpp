// The per-layer precision selector: fastest option within the error budget, ties, budget edges,
// a layer where FP8 is too inaccurate, every layer over budget, bad input. The last tests ground
// the default budget in errors computed here from CUDA's own FP8/BF16/FP16 host conversions.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

#include "tcbench/numerics/fp8_scaling.hpp"
#include "tcbench/studies/precision_selector.hpp"

namespace tn = tcbench::studies;
using tcbench::Precision;

namespace {

using tcbench::numerics::Fp8Recipe;

tn::PrecisionOption fp8(double s, double e, Fp8Recipe recipe = Fp8Recipe::delayed) {
  return {Precision::fp8, recipe, s, e};
}
tn::PrecisionOption bf16(double s, double e) {
  return {Precision::bf16, std::nullopt, s, e};
}
tn::PrecisionOption fp16(double s, double e) {
  return {Precision::fp16, std::nullopt, s, e};
}

TEST(PrecisionSelector, PicksTheFastestWithinBudgetPerLayer) {
  const std::vector<tn::LayerMeasurements> block = {
      {"qkv", {bf16(2.0, 0.003), fp16(2.0, 0.0005), fp8(1.1, 0.035)}},
      {"mlp_down", {bf16(4.0, 0.003), fp16(4.1, 0.0005), fp8(2.2, 0.04, Fp8Recipe::current)}},
  };
  const tn::Selection sel = tn::select_precisions(block, 0.05);
  ASSERT_EQ(sel.layers.size(), 2u);
  EXPECT_EQ(sel.layers[0].chosen.label(), "fp8/delayed");
  EXPECT_EQ(sel.layers[0].option, 2u);
  EXPECT_EQ(sel.layers[1].chosen.label(), "fp8/current");
  EXPECT_DOUBLE_EQ(sel.total_seconds, 1.1 + 2.2);
  EXPECT_TRUE(sel.within_budget());
  EXPECT_EQ(sel.over_budget_count(), 0u);
  EXPECT_NE(sel.layers[0].reason.find("fastest"), std::string::npos) << sel.layers[0].reason;
}

TEST(PrecisionSelector, AFp8LayerTooInaccurateFallsBackToTheNextFastest) {
  // Outliers make FP8 cost 12% on this layer: the selector must not take the 2x speed-up.
  const std::vector<tn::LayerMeasurements> block = {
      {"qkv", {bf16(2.0, 0.003), fp8(1.0, 0.035)}},
      {"mlp_down", {bf16(4.0, 0.003), fp16(3.9, 0.0005), fp8(2.0, 0.12)}},
  };
  const tn::Selection sel = tn::select_precisions(block);
  EXPECT_EQ(sel.budget, tn::kDefaultLayerErrorBudget);
  EXPECT_EQ(sel.layers[0].chosen.precision, Precision::fp8);
  EXPECT_EQ(sel.layers[1].chosen.precision, Precision::fp16);  // faster than bf16 here
  EXPECT_DOUBLE_EQ(sel.total_seconds, 1.0 + 3.9);
  EXPECT_TRUE(sel.within_budget());
}

TEST(PrecisionSelector, TiesGoToTheSmallerErrorThenTheFirstListed) {
  const std::vector<tn::LayerMeasurements> equal_time = {
      {"l", {bf16(1.0, 0.003), fp16(1.0, 0.0005)}}};
  EXPECT_EQ(tn::select_precisions(equal_time).layers[0].chosen.precision, Precision::fp16);
  const std::vector<tn::LayerMeasurements> full_tie = {{"l", {bf16(1.0, 0.001), fp16(1.0, 0.001)}},
                                                       {"m", {fp16(1.0, 0.001), bf16(1.0, 0.001)}}};
  const tn::Selection sel = tn::select_precisions(full_tie);
  EXPECT_EQ(sel.layers[0].chosen.precision, Precision::bf16);
  EXPECT_EQ(sel.layers[1].chosen.precision, Precision::fp16);
}

TEST(PrecisionSelector, BudgetEdgeIsInclusive) {
  const std::vector<tn::LayerMeasurements> block = {{"l", {bf16(2.0, 0.003), fp8(1.0, 0.05)}}};
  EXPECT_EQ(tn::select_precisions(block, 0.05).layers[0].chosen.precision, Precision::fp8);
  EXPECT_EQ(tn::select_precisions(block, std::nextafter(0.05, 0.0)).layers[0].chosen.precision,
            Precision::bf16);
  // A budget below every error: nothing is eligible.
  const tn::Selection tight = tn::select_precisions(block, 0.001);
  EXPECT_FALSE(tight.within_budget());
}

TEST(PrecisionSelector, NanErrorNeverPasses) {
  const std::vector<tn::LayerMeasurements> block = {
      {"l", {fp8(0.5, std::nan("")), bf16(2.0, 0.003)}}};
  const tn::Selection sel = tn::select_precisions(block, 1e9);
  EXPECT_EQ(sel.layers[0].chosen.precision, Precision::bf16);
  // Even as the only option it is over budget, and the fallback prefers any number to NaN.
  const std::vector<tn::LayerMeasurements> only_nan = {
      {"l", {fp8(0.5, std::nan("")), fp8(0.6, 0.9, Fp8Recipe::current)}}};
  const tn::Selection fb = tn::select_precisions(only_nan, 0.05);
  EXPECT_FALSE(fb.within_budget());
  EXPECT_EQ(fb.layers[0].chosen.label(), "fp8/current");
}

TEST(PrecisionSelector, AllLayersOverBudgetFallBackToTheMostAccurate) {
  const std::vector<tn::LayerMeasurements> block = {
      {"qkv", {fp8(1.0, 0.2), bf16(2.0, 0.08), fp16(2.5, 0.06)}},
      {"mlp", {fp8(1.0, 0.3), bf16(2.0, 0.07), fp16(1.9, 0.07)}},
  };
  const tn::Selection sel = tn::select_precisions(block, 0.05);
  EXPECT_FALSE(sel.within_budget());
  EXPECT_EQ(sel.over_budget_count(), 2u);
  EXPECT_EQ(sel.layers[0].chosen.precision, Precision::fp16);  // 6% beats 8%
  EXPECT_EQ(sel.layers[1].chosen.precision, Precision::fp16);  // equal error: the faster
  EXPECT_DOUBLE_EQ(sel.total_seconds, 2.5 + 1.9);
  for (const tn::LayerChoice& c : sel.layers) {
    EXPECT_FALSE(c.within_budget);
    EXPECT_NE(c.reason.find("no option is within 5%"), std::string::npos) << c.reason;
  }
}

TEST(PrecisionSelector, UniformSelectionsForComparison) {
  const std::vector<tn::LayerMeasurements> block = {
      {"qkv", {bf16(2.0, 0.003), fp8(1.2, 0.03), fp8(1.1, 0.03, Fp8Recipe::current)}},
      {"mlp_down", {bf16(4.0, 0.003), fp8(2.0, 0.12), fp8(2.1, 0.11, Fp8Recipe::current)}},
  };
  const tn::Selection all_bf16 = tn::uniform_selection(block, Precision::bf16);
  EXPECT_DOUBLE_EQ(all_bf16.total_seconds, 6.0);
  EXPECT_TRUE(all_bf16.within_budget());
  const tn::Selection all_fp8 = tn::uniform_selection(block, Precision::fp8);
  EXPECT_DOUBLE_EQ(all_fp8.total_seconds, 1.1 + 2.0);  // fastest recipe per layer
  EXPECT_EQ(all_fp8.over_budget_count(), 1u);
  const tn::Selection delayed = tn::uniform_selection(block, Precision::fp8, Fp8Recipe::delayed);
  EXPECT_DOUBLE_EQ(delayed.total_seconds, 1.2 + 2.0);
  EXPECT_THROW((void)tn::uniform_selection(block, Precision::fp16), std::invalid_argument);
  const tn::Selection mix = tn::select_precisions(block);
  EXPECT_DOUBLE_EQ(mix.total_seconds, 1.1 + 4.0);
  // A layer's option by precision (and recipe), not by its place in the list.
  EXPECT_DOUBLE_EQ(block[0].fastest(Precision::bf16)->seconds, 2.0);
  EXPECT_DOUBLE_EQ(block[0].fastest(Precision::fp8, Fp8Recipe::delayed)->seconds, 1.2);
  EXPECT_EQ(block[0].fastest(Precision::fp16), nullptr);
  EXPECT_EQ(block[1].fastest(Precision::fp8)->label(), "fp8/delayed");
}

TEST(PrecisionSelector, RejectsBadInputWithASentence) {
  const std::vector<tn::LayerMeasurements> ok = {{"l", {bf16(1.0, 0.0)}}};
  for (double b : {0.0, -0.1, double(INFINITY), std::nan("")})
    EXPECT_THROW((void)tn::select_precisions(ok, b), std::invalid_argument) << b;
  const std::vector<tn::LayerMeasurements> empty = {{"qkv", {}}};
  try {
    (void)tn::select_precisions(empty);
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("'qkv' has no measured options"), std::string::npos);
  }
  for (double t : {-1.0, std::nan(""), double(INFINITY)}) {
    const std::vector<tn::LayerMeasurements> bad = {{"mlp", {bf16(1.0, 0.0), fp8(t, 0.01)}}};
    try {
      (void)tn::select_precisions(bad);
      FAIL() << t;
    } catch (const std::invalid_argument& e) {
      EXPECT_NE(std::string(e.what()).find("fp8/delayed"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(tn::select_precisions(std::vector<tn::LayerMeasurements>{}).within_budget());
}

// ---------------------------------------------------------------------------------------------
// The default budget against real quantization errors (CUDA's host conversions, FP64 GEMM).

struct Matrix {
  int rows, cols;
  std::vector<float> v;  // column-major
};

Matrix random_matrix(int rows, int cols, std::uint32_t seed, float outlier_scale = 0.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  Matrix m{rows, cols, std::vector<float>(static_cast<std::size_t>(rows) * cols)};
  for (float& x : m.v) x = u(rng);
  // A few outlier channels (rows), as transformer activations have.
  if (outlier_scale > 0)
    for (int r = 0; r < rows; r += rows / 4)
      for (int c = 0; c < cols; ++c) m.v[static_cast<std::size_t>(c) * rows + r] *= outlier_scale;
  return m;
}

std::vector<double> gemm_tn(const Matrix& a, const Matrix& b) {  // A^T (a.cols x k) * B (k x n)
  std::vector<double> d(static_cast<std::size_t>(a.cols) * b.cols);
  for (int j = 0; j < b.cols; ++j)
    for (int i = 0; i < a.cols; ++i) {
      double s = 0;
      for (int l = 0; l < a.rows; ++l)
        s += double(a.v[static_cast<std::size_t>(i) * a.rows + l]) *
             double(b.v[static_cast<std::size_t>(j) * b.rows + l]);
      d[static_cast<std::size_t>(j) * a.cols + i] = s;
    }
  return d;
}

// Each operand quantized per tensor (current scaling) to `f` and dequantized.
Matrix fp8_quantized(const Matrix& m, tn::Fp8Format f) {
  const tn::CurrentScaled cs = tn::current_scaling(m.v, f);
  Matrix q = m;
  for (float& x : q.v)
    x = tn::scaled_decode_fp8(tn::scaled_cast_fp8(x, cs.scale, f), cs.scale_inv, f);
  return q;
}
Matrix rounded(const Matrix& m, tn::Format f) {
  Matrix q = m;
  for (float& x : q.v) x = tn::round_trip(x, f);
  return q;
}

double rel_error(const std::vector<double>& got, const std::vector<double>& want) {
  double num = 0, den = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / den);
}

// Input rounding dominates a GEMM's error (the accumulation is FP32 in every path measured), so
// the error of the quantized-input product against the exact product is the error to budget.
TEST(DefaultBudget, AdmitsE4m3AndRejectsE5m2ActivationsAndStaleScales) {
  const int k = 512, m = 64, n = 64;
  const Matrix w = random_matrix(k, m, 1), x = random_matrix(k, n, 2);
  const std::vector<double> exact = gemm_tn(w, x);
  const Matrix wq = fp8_quantized(w, tn::Fp8Format::e4m3);
  const double e4m3 = rel_error(gemm_tn(wq, fp8_quantized(x, tn::Fp8Format::e4m3)), exact);
  const double e4m3_e5m2 = rel_error(gemm_tn(wq, fp8_quantized(x, tn::Fp8Format::e5m2)), exact);
  const double bf16 =
      rel_error(gemm_tn(rounded(w, tn::Format::bf16), rounded(x, tn::Format::bf16)), exact);
  const double fp16 =
      rel_error(gemm_tn(rounded(w, tn::Format::fp16), rounded(x, tn::Format::fp16)), exact);
  // Outlier channels 2^12 times the bulk: the exponent absorbs them, and the output's norm is
  // carried by the outlier terms, so the relative error hardly moves.
  const Matrix xo = random_matrix(k, n, 2, 4096.0f);
  const double e4m3_outliers =
      rel_error(gemm_tn(wq, fp8_quantized(xo, tn::Fp8Format::e4m3)), gemm_tn(w, xo));
  // A stale delayed scale: the activations grew 4x since the amax history was written, so the
  // cast saturates everything above a quarter of the range.
  const tn::CurrentScaled cs = tn::current_scaling(x.v, tn::Fp8Format::e4m3);
  Matrix xs = x;
  for (float& v : xs.v)
    v = tn::scaled_decode_fp8(tn::scaled_cast_fp8(v, 4 * cs.scale, tn::Fp8Format::e4m3),
                              1 / (4 * cs.scale), tn::Fp8Format::e4m3);
  const double e4m3_stale = rel_error(gemm_tn(wq, xs), exact);
  std::printf(
      "rel. error, %dx%dx%d uniform(-1,1): e4m3 %.4f  e4m3 x e5m2 %.4f  bf16 %.5f  "
      "fp16 %.6f  e4m3 with 2^12 outlier channels %.4f  e4m3 with a 4x stale scale %.4f\n",
      m, n, k, e4m3, e4m3_e5m2, bf16, fp16, e4m3_outliers, e4m3_stale);
  // Unit roundoffs 2^-4 (E4M3), 2^-3 (E5M2), 2^-8 (BF16), 2^-11 (FP16) set the order of each:
  // about u / sqrt(3) per operand, sqrt(2) operands.
  EXPECT_GT(e4m3, 0.02);
  EXPECT_LT(e4m3, tn::kDefaultLayerErrorBudget);
  EXPECT_GT(e4m3_e5m2, tn::kDefaultLayerErrorBudget);
  EXPECT_LT(e4m3_outliers, tn::kDefaultLayerErrorBudget);
  EXPECT_GT(e4m3_stale, 4 * tn::kDefaultLayerErrorBudget);
  EXPECT_LT(bf16, tn::kDefaultLayerErrorBudget / 10);
  EXPECT_LT(fp16, bf16 / 4);
}

}  // namespace
