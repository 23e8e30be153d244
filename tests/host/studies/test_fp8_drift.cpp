// Delayed vs current scaling on tensors whose range drifts over steps. The expected numbers are
// derived from the recipe's definition, not from the code: with a uniform base tensor |u| <= A
// and a tensor that grows by g per step, delayed scaling (max over the history) casts step t
// with scale 448 / (A g^(t-1) 2^margin), so an element overflows E4M3 when
// |u| * 448 g / (A 2^margin) > 464 (the rounding midpoint past 448, which RNE sends to the
// unrepresentable 480): a fraction 1 - (464/448) 2^margin / g of the elements saturates, from
// step 1 on, for any history length. After a spike of height h the history holds h for
// amax_history_len updates, and elements with |u| 448 / (A h) <= 2^-10 (half E4M3's smallest
// subnormal, a tie that rounds to even, i.e. 0) flush to zero.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "../doc_tables.hpp"
#include "tcbench/studies/fp8_drift.hpp"

namespace tn = tcbench::studies;

namespace {

constexpr int kN = 8192;

std::vector<float> uniform_grid() {
  return tn::uniform_grid(kN);
}
const float kA = 1.0f - 1.0f / kN;  // the grid's amax

double saturating_fraction(double g, int margin) {
  return std::max(0.0, 1.0 - (464.0 / 448.0) * std::ldexp(1.0, margin) / g);
}

std::vector<tn::DriftStep> run(const std::vector<float>& amp, int history, int margin,
                               tn::AmaxReduction algo = tn::AmaxReduction::max) {
  const std::vector<float> base = uniform_grid();
  return tn::simulate_drift(base, amp,
                            {.amax_history_len = history, .amax_compute = algo, .margin = margin});
}

TEST(CastStats, CountsSaturationFlushAndError) {
  const std::vector<float> xs = {1.0f, 500.0f, -470.0f, 460.0f, 0x1p-11f, 0.0f, NAN, INFINITY};
  const tn::CastStats s = tn::cast_stats(xs, 1.0f, tn::Fp8Format::e4m3);
  EXPECT_EQ(s.elements, 8u);
  EXPECT_EQ(s.saturated, 2u);  // 500 and -470; 460 rounds to 448 on its own
  EXPECT_EQ(s.flushed, 1u);    // 2^-11 < 2^-10
  EXPECT_EQ(s.not_finite, 2u);
  EXPECT_DOUBLE_EQ(s.overshoot, 500.0 / 448.0);
  const double err2 = 52.0 * 52 + 22.0 * 22 + 12.0 * 12 + std::ldexp(1.0, -22);
  const double ref2 = 1.0 + 500.0 * 500 + 470.0 * 470 + 460.0 * 460 + std::ldexp(1.0, -22);
  EXPECT_NEAR(s.rel_error, std::sqrt(err2 / ref2), 1e-12);
  // E5M2 saturates only past 61440 (midpoint of 57344 and the unrepresentable 65536).
  const std::vector<float> big = {61000.0f, 62000.0f, 0x1p-17f, 0x1p-16f};
  const tn::CastStats e = tn::cast_stats(big, 1.0f, tn::Fp8Format::e5m2);
  EXPECT_EQ(e.saturated, 1u);
  EXPECT_EQ(e.flushed, 1u);  // 2^-17 is half the smallest subnormal: a tie, rounds to 0
  EXPECT_EQ(e.subnormal, 1u);
  EXPECT_EQ(tn::cast_stats(std::vector<float>{}, 1.0f, tn::Fp8Format::e4m3).rel_error, 0.0);
}

TEST(Fp8Drift, GrowthSaturatesTheFractionTheRecipePredicts) {
  for (auto [g, margin] : {std::pair{1.25f, 0}, std::pair{2.0f, 0}, std::pair{4.0f, 1},
                           std::pair{1.25f, 1}, std::pair{8.0f, 2}}) {
    const std::vector<tn::DriftStep> steps = run(tn::geometric_amplitudes(12, g), 16, margin);
    const double want = saturating_fraction(g, margin);
    for (std::size_t t = 1; t < steps.size(); ++t) {
      EXPECT_NEAR(steps[t].delayed.saturated_fraction(), want, 2.0 / kN)
          << "g=" << g << " margin=" << margin << " step " << t;
      EXPECT_NEAR(steps[t].delayed.overshoot, g / std::ldexp(1.0, margin), 1e-5);
      EXPECT_EQ(steps[t].current.saturated, 0u);
      EXPECT_NEAR(steps[t].current.overshoot, 1.0, 1e-6);
    }
    const tn::DriftSummary s = tn::summarize(steps);
    EXPECT_EQ(s.first_saturated_step, want > 0 ? 1 : -1);
    EXPECT_EQ(s.saturated_steps, want > 0 ? 11 : 0);
  }
}

TEST(Fp8Drift, HistoryLengthDoesNotHelpMonotonicGrowth) {
  const std::vector<float> amp = tn::geometric_amplitudes(20, 1.5f);
  const tn::DriftSummary one = tn::summarize(run(amp, 1, 0));
  const tn::DriftSummary long_history = tn::summarize(run(amp, 1024, 0));
  EXPECT_EQ(one.saturated_steps, long_history.saturated_steps);
  EXPECT_DOUBLE_EQ(one.worst_saturated_fraction, long_history.worst_saturated_fraction);
  EXPECT_DOUBLE_EQ(one.delayed_mean_error, long_history.delayed_mean_error);
  // Clipping a third of the elements costs far more than FP8 rounding.
  EXPECT_GT(one.delayed_mean_error, 5 * one.current_mean_error);
}

TEST(Fp8Drift, ASpikeSaturatesOnceThenUnderflowsForTheHistoryLength) {
  const float h = 4096.0f;
  const int at = 4, history = 8;
  const std::vector<tn::DriftStep> steps = run(tn::spike_amplitudes(30, at, h), history, 0);
  // The spike step itself is cast with the scale of amplitude 1.
  EXPECT_NEAR(steps[at].delayed.saturated_fraction(), saturating_fraction(h, 0), 2.0 / kN);
  // Then amax_history_len steps cast with the spike's scale: |u| <= 2^-10 h / 448 flushes.
  const double flushed = std::ldexp(1.0, -10) * h / 448.0 / kA;
  for (int t = at + 1; t <= at + history; ++t)
    EXPECT_NEAR(steps[static_cast<std::size_t>(t)].delayed.flushed_fraction(), flushed, 2.0 / kN)
        << "step " << t;
  EXPECT_EQ(steps[at + history + 1].delayed.flushed, 0u);
  EXPECT_EQ(tn::summarize(steps).underflow_steps, history);
  // most_recent forgets the spike after one step.
  EXPECT_EQ(tn::summarize(
                run(tn::spike_amplitudes(30, at, h), history, 0, tn::AmaxReduction::most_recent))
                .underflow_steps,
            1);
  for (const tn::DriftStep& st : steps) EXPECT_EQ(st.current.flushed, 0u);
}

TEST(Fp8Drift, MarginTradesSaturationForUnderflow) {
  // Growth of 1.5x per step: margin 0 saturates, margin 1 does not.
  const std::vector<float> amp = tn::geometric_amplitudes(16, 1.5f);
  EXPECT_GT(tn::summarize(run(amp, 16, 0)).saturated_steps, 0);
  EXPECT_EQ(tn::summarize(run(amp, 16, 1)).saturated_steps, 0);
  // On a steady tensor the margin only lowers the scale: no saturation either way, and the
  // subnormal share grows with it (each margin step halves the scale).
  const std::vector<float> flat(16, 1.0f);
  const std::vector<tn::DriftStep> m0 = run(flat, 16, 0), m4 = run(flat, 16, 4);
  EXPECT_GT(m4[5].delayed.subnormal, m0[5].delayed.subnormal);
  EXPECT_EQ(tn::summarize(m4).saturated_steps, 0);
}

TEST(Fp8Drift, GradientsUseE5m2UnderHybrid) {
  const std::vector<float> base = uniform_grid();
  const std::vector<float> amp = tn::geometric_amplitudes(4, 2.0f);
  const auto steps =
      tn::simulate_drift(base, amp, {.amax_history_len = 4}, tn::TensorRole::backward);
  EXPECT_FLOAT_EQ(steps[1].delayed_scale, 57344.0f / kA);
  EXPECT_NEAR(steps[2].delayed.saturated_fraction(), 1.0 - (61440.0 / 57344.0) / 2.0, 2.0 / kN);
}

TEST(Fp8Drift, SchedulesRejectNonsense) {
  EXPECT_EQ(tn::geometric_amplitudes(3, 2.0f), (std::vector<float>{1, 2, 4}));
  EXPECT_EQ(tn::spike_amplitudes(3, 1, 8.0f), (std::vector<float>{1, 8, 1}));
  EXPECT_THROW((void)tn::geometric_amplitudes(3, 0.0f), std::invalid_argument);
  EXPECT_THROW((void)tn::geometric_amplitudes(-1, 2.0f), std::invalid_argument);
  EXPECT_THROW((void)tn::spike_amplitudes(3, 3, 2.0f), std::invalid_argument);
  EXPECT_THROW((void)tn::spike_amplitudes(3, 0, NAN), std::invalid_argument);
}

// The table in docs/concepts/fp8-scaling.md ("Drifting tensors"): deterministic CPU numbers.
// The rows of one tensor at margin 0 that every history length gives alike are one row,
// "any": for monotonic growth the max over any window is the last step's amax.
std::string drift_table() {
  std::string out =
      "| tensor | history | margin | saturating steps | worst saturated | worst overshoot "
      "| underflow steps | delayed error mean / worst | current error mean |\n"
      "|---|---|---|---|---|---|---|---|---|\n";
  char buf[256];
  for (const tn::DriftScenario& sc : tn::drift_scenarios()) {
    std::vector<std::pair<std::string, std::string>> rows;  // (history, the rest of the row)
    for (auto [history, margin] : tn::kDriftConfigs) {
      const tn::DriftSummary s = tn::summarize(run(sc.amplitude, history, margin));
      std::snprintf(buf, sizeof buf, "| %d | %d of %d | %.2f%% | %.2fx | %d | %.3f / %.3f | %.3f |",
                    margin, s.saturated_steps, s.steps - 1, 100 * s.worst_saturated_fraction,
                    s.worst_overshoot, s.underflow_steps, s.delayed_mean_error,
                    s.delayed_worst_error, s.current_mean_error);
      rows.emplace_back(std::to_string(history), buf);
    }
    // kDriftConfigs lists margin 0 at every history first; fold them when they agree.
    std::size_t at_margin0 = 0;
    while (at_margin0 < rows.size() && tn::kDriftConfigs[at_margin0].margin == 0) ++at_margin0;
    bool alike = at_margin0 > 1;
    for (std::size_t i = 1; i < at_margin0; ++i) alike = alike && rows[i].second == rows[0].second;
    if (alike) {
      rows.erase(rows.begin() + 1, rows.begin() + static_cast<std::ptrdiff_t>(at_margin0));
      rows[0].first = "any";
    }
    for (const auto& [history, rest] : rows)
      out += "| " + sc.label + " | " + history + " " + rest + "\n";
  }
  return out;
}

TEST(Fp8Drift, CurrentScalingNeverClipsInAnyScenario) {
  for (const tn::DriftScenario& sc : tn::drift_scenarios())
    for (auto [history, margin] : tn::kDriftConfigs)
      EXPECT_LE(tn::summarize(run(sc.amplitude, history, margin)).current_worst_error, 0.03)
          << sc.label << ", history " << history << ", margin " << margin
          << ": E4M3 rounding alone, never a clip";
}

TEST(Fp8Drift, DocsPageCarriesTheTable) {
  tcbench::test::expect_page_tables("docs/concepts/fp8-scaling.md", "computed",
                                    {{"fp8-drift", drift_table()}});
}

}  // namespace
