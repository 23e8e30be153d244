// The range plan of a whole training step (benchmarks/step_ranges.hpp) against CUPTI's profiler
// host API, without a GPU, on the three datacenter chips and GeForce Blackwell (GB202): 5 ranges
// (the step and its 4 phases) on 2 nesting levels, the chip's whole metric set in every range, and
// the replays that costs: CUPTI's passes for the set, once per nesting level. The pass counts are
// CUPTI 13.0's (docs/concepts/tensor-util.md, "Replay passes" and "Whole step"); a newer CUPTI that
// changes them fails here so that the page is updated with it. Then what a bad range list is told.
#include "step_ranges.hpp"
#include "tcbench/profiling/availability.hpp"
#include "tcbench/profiling/range_plan.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <ostream>
#include <string>
#include <vector>

namespace tcbench::profiling {
namespace {

struct ChipPasses {
  const char* chip;
  std::size_t config_passes;  // the full metric table, one level (CUPTI 13.0)
};

// Printed as its chip, so that the test's name (and CTest's) is stable.
void PrintTo(const ChipPasses& p, std::ostream* os) {
  *os << p.chip;
}

class StepPlan : public ::testing::TestWithParam<ChipPasses> {};

TEST_P(StepPlan, FiveRangesOnTwoLevelsWithTheChipsMetricSet) {
  const ChipPasses want = GetParam();
  ProfilerHost host(want.chip);
  const std::vector<RangeSpec> ranges = bench::step_ranges();
  const RangePlan plan = plan_ranges(host, ranges);

  EXPECT_EQ(plan.chip, want.chip);
  ASSERT_EQ(plan.ranges.size(), 5u);
  EXPECT_EQ(plan.paths, (std::vector<std::string>{"step", "step/forward", "step/backward",
                                                  "step/unscale", "step/optimizer"}));
  EXPECT_EQ(plan.nesting_levels, 2);
  for (studies::StepPhase p : studies::kStepPhases)
    EXPECT_EQ(plan.paths[1 + studies::index(p)], bench::phase_range_path(p));

  // The metric set is the chip's table, headline first.
  const ChipMetrics table = *metrics_for_chip(want.chip);
  ASSERT_EQ(plan.metrics.size(), table.metrics.size());
  EXPECT_EQ(plan.metrics.front().name, kTensorActive.name);

  // Passes: CUPTI's own count for an independently built image of the same metrics, times the
  // two levels; and the CUPTI 13.0 figure the concept page prints.
  std::vector<std::string> names;
  for (const Metric& m : table.metrics) names.emplace_back(m.name);
  ProfilerHost other(want.chip);
  const std::size_t cupti_passes = ProfilerHost::passes(other.config_image(names));
  EXPECT_EQ(plan.config_passes, cupti_passes);
  EXPECT_EQ(plan.config_passes, want.config_passes) << want.chip;
  EXPECT_EQ(plan.passes(), 2 * cupti_passes);
  std::cout << "[ plan     ] " << want.chip << ": " << plan.ranges.size() << " ranges, "
            << plan.nesting_levels << " levels, " << plan.config_passes << " passes x "
            << plan.nesting_levels << " = " << plan.passes() << " replays of the step\n";
}

INSTANTIATE_TEST_SUITE_P(Datacenter, StepPlan,
                         ::testing::Values(ChipPasses{"GH100", 8}, ChipPasses{"GA100", 6},
                                           ChipPasses{"GB100", 9}, ChipPasses{"GB202", 8}),
                         [](const auto& p) { return std::string(p.param.chip); });

TEST(RangePlan, OneRangeIsTheCollectCountersPlan) {
  // One range around a GEMM or a tensor-peak launch (bench_tensor_util, bench_tensor_peak):
  // one level, the chip's passes, on Hopper and on both Blackwell lines.
  for (const char* chip : {"GH100", "GB100", "GB202"}) {
    ProfilerHost host(chip);
    const std::vector<RangeSpec> one{{"tcbench", 1}};
    const RangePlan plan = plan_ranges(host, one);
    EXPECT_EQ(plan.nesting_levels, 1) << chip;
    EXPECT_EQ(plan.passes(), plan.config_passes) << chip;
    EXPECT_EQ(plan.paths, std::vector<std::string>{"tcbench"}) << chip;
  }
}

// The counter data image holds twice the ranges' tree nodes (NVIDIA's Nsight Perf SDK sizing):
// the whole step's 5 ranges get 10, one range 2.
TEST(RangePlan, CounterDataHasTwiceTheRangeTreeNodes) {
  EXPECT_EQ(range_tree_nodes(bench::step_ranges().size()), 10u);
  EXPECT_EQ(range_tree_nodes(1), 2u);
}

TEST(RangePlan, PathsJoinParentsAndSiblingsShareAParent) {
  const std::vector<RangeSpec> r{{"a", 1}, {"b", 2}, {"c", 3}, {"d", 2}, {"e", 1}, {"f", 2}};
  EXPECT_EQ(range_paths(r), (std::vector<std::string>{"a", "a/b", "a/b/c", "a/d", "e", "e/f"}));
}

void expect_refused(const std::vector<RangeSpec>& r, const std::string& words) {
  try {
    (void)range_paths(r);
    FAIL() << "accepted a plan that should fail with: " << words;
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(words), std::string::npos) << e.what();
  }
}

TEST(RangePlan, BadRangeListsAreRefusedNamingTheRange) {
  expect_refused({}, "at least one range");
  expect_refused({{"step", 2}}, "range 0 ('step') is at level 2");
  expect_refused({{"step", 1}, {"forward", 3}}, "range 1 ('forward') is at level 3");
  expect_refused({{"step", 1}, {"a/b", 2}}, "range 1 ('a/b'): a range name is");
  expect_refused({{"step", 1}, {"", 2}}, "range 1 (''): a range name is");
  expect_refused({{"step", 1}, {"x", 2}, {"x", 2}}, "the path 'step/x' repeats");
  ProfilerHost host("GH100");
  const std::vector<RangeSpec> bad{{"step", 0}};
  EXPECT_THROW((void)plan_ranges(host, bad), InvalidArgument);
}

}  // namespace
}  // namespace tcbench::profiling
