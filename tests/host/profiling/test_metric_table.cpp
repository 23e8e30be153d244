// The per-chip metric table against CUPTI itself, through the profiler host API, which runs
// without a GPU: every metric tcbench asks for exists on every chip it claims, builds a
// configuration image, and needs a known number of replay passes; the table misses no tensor
// sub-pipe CUPTI exposes; every chip CUPTI knows is either claimed or left out with a reason.
#include "tcbench/profiling/availability.hpp"
#include "tcbench/profiling/metric_table.hpp"
#include "tcbench/profiling/profiler_host.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <iostream>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace tcbench::profiling {
namespace {

// Replays are real work (each pass reruns the profiled GEMMs); sm__throughput alone costs 5-9
// passes on CUPTI 13.0. A table that needs more than this has grown a metric by mistake.
constexpr std::size_t kMaxPasses = 10;

std::string base_name(std::string_view full) {
  return std::string(full.substr(0, full.find('.')));
}

std::set<std::string> all_base_metrics(const ProfilerHost& host) {
  std::set<std::string> out;
  for (CUpti_MetricType t :
       {CUPTI_METRIC_TYPE_COUNTER, CUPTI_METRIC_TYPE_RATIO, CUPTI_METRIC_TYPE_THROUGHPUT})
    for (std::string& m : host.base_metrics(t)) out.insert(std::move(m));
  return out;
}

std::vector<std::string> names_of(const ChipMetrics& cm) {
  std::vector<std::string> out;
  for (const Metric& m : cm.metrics) out.emplace_back(m.name);
  return out;
}

TEST(MetricTable, EveryChipCuptiKnowsIsClaimedOrLeftOutWithAReason) {
  const std::vector<std::string> supported = supported_chips();
  ASSERT_FALSE(supported.empty());
  for (const std::string& chip : supported) {
    const bool claimed = metrics_for_chip(chip).has_value();
    const bool unclaimed = std::ranges::any_of(
        unclaimed_chips(), [&](const UnclaimedChip& u) { return u.chip == chip; });
    EXPECT_NE(claimed, unclaimed) << chip << ": claimed=" << claimed << " unclaimed=" << unclaimed;
  }
  for (std::string_view chip : claimed_chips())
    EXPECT_NE(std::ranges::find(supported, std::string(chip)), supported.end())
        << chip << " is claimed but this CUPTI does not know it";
}

TEST(MetricTable, CountersAreUniquePerChipAndHeadlineFirst) {
  for (std::string_view chip : claimed_chips()) {
    const ChipMetrics cm = *metrics_for_chip(chip);
    ASSERT_FALSE(cm.metrics.empty());
    EXPECT_EQ(cm.metrics.front().name, kTensorActive.name) << chip;
    std::set<std::string_view> counters;
    for (const Metric& m : cm.metrics) {
      EXPECT_TRUE(counters.insert(m.counter).second) << chip << " repeats " << m.counter;
      const std::vector<std::string_view> known = all_counters();
      EXPECT_NE(std::ranges::find(known, m.counter), known.end()) << m.counter;
    }
  }
}

class PerChip : public ::testing::TestWithParam<std::string_view> {};

TEST_P(PerChip, EveryMetricExistsAndTheConfigurationBuilds) {
  const std::string chip(GetParam());
  const ChipMetrics cm = *metrics_for_chip(chip);
  ProfilerHost host(chip);
  const std::set<std::string> base = all_base_metrics(host);
  for (const Metric& m : cm.metrics)
    EXPECT_TRUE(base.contains(base_name(m.name))) << chip << " has no " << m.name;

  std::vector<std::string> names = names_of(cm);
  const std::vector<std::uint8_t> image = host.config_image(names);
  EXPECT_FALSE(image.empty());
  const std::size_t passes = ProfilerHost::passes(image);
  EXPECT_GE(passes, 1u);
  EXPECT_LE(passes, kMaxPasses) << chip;
  std::cout << "[ passes   ] " << chip << ": " << passes << " for " << names.size() << " metrics\n";
  RecordProperty("passes", static_cast<int>(passes));
}

TEST_P(PerChip, TheHeadlineAloneIsOnePass) {
  const std::string chip(GetParam());
  ProfilerHost host(chip);
  const std::vector<std::string> headline{std::string(kTensorActive.name)};
  EXPECT_EQ(ProfilerHost::passes(host.config_image(headline)), 1u) << chip;
}

TEST_P(PerChip, NoTensorSubPipeIsMissing) {
  // Every per-operation tensor pipe CUPTI lists for the chip (except the _v2/_realtime
  // duplicates of Ada and GB20x) must be in the table, so a chip never silently loses one.
  const std::string chip(GetParam());
  const ChipMetrics cm = *metrics_for_chip(chip);
  ProfilerHost host(chip);
  const std::regex sub_pipe(R"(sm__pipe_tensor_(op|subpipe)_\w+_cycles_active)");
  std::set<std::string> in_table;
  for (const Metric& m : cm.metrics) in_table.insert(base_name(m.name));
  for (const std::string& m : host.base_metrics(CUPTI_METRIC_TYPE_COUNTER)) {
    if (!std::regex_match(m, sub_pipe)) continue;
    EXPECT_TRUE(in_table.contains(m)) << chip << " exposes " << m << ", missing from the table";
  }
}

INSTANTIATE_TEST_SUITE_P(Claimed, PerChip,
                         ::testing::ValuesIn(claimed_chips().begin(), claimed_chips().end()),
                         [](const auto& chip_param) { return std::string(chip_param.param); });

TEST(MetricTable, UnknownChipIsNotInTheTableAndTheHostNamesIt) {
  EXPECT_FALSE(metrics_for_chip("GX999").has_value());
  EXPECT_FALSE(metrics_for_chip("gh100").has_value());  // CUPTI's names are upper case
  EXPECT_NE(unknown_chip_reason("GX999").find("GX999"), std::string::npos);
  try {
    ProfilerHost host("GX999");
    FAIL() << "CUPTI accepted chip GX999";
  } catch (const CountersUnavailable& e) {
    EXPECT_NE(std::string(e.what()).find("GX999"), std::string::npos) << e.what();
  }
}

TEST(MetricTable, UnknownMetricIsAnErrorNamingItAndTheChip) {
  ProfilerHost host("GH100");
  const std::vector<std::string> bogus{"sm__pipe_tensor_cycles_active.avg.no_such_submetric"};
  try {
    host.config_image(bogus);
    FAIL() << "CUPTI accepted " << bogus[0];
  } catch (const CountersUnavailable&) {
    FAIL() << "a bad metric name is a bug, not an environment problem";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("no_such_submetric"), std::string::npos) << what;
    EXPECT_NE(what.find("GH100"), std::string::npos) << what;
  }
}

TEST(MetricTable, HopperSubPipesAreTheOnesNsightDescribes) {
  // Golden from CUPTI's own descriptions (cuptiProfilerHostGetMetricProperties on GH100):
  // hmma covers HMMA/HFMA2.MMA/HGMMA/QGMMA, imma covers IMMA/IGMMA/BMMA/BGMMA.
  const ChipMetrics cm = *metrics_for_chip("GH100");
  std::vector<std::string_view> counters;
  for (const Metric& m : cm.metrics) counters.push_back(m.counter);
  EXPECT_EQ(counters,
            (std::vector<std::string_view>{
                "tensor_active_pct", "tensor_hmma_pct", "tensor_imma_pct", "tensor_dmma_pct",
                "tensor_hmma_hgmma_qgmma_pct", "sm_throughput_pct", "dram_throughput_pct"}));
}

// bench_tensor_util's (and bench_tensor_peak's) metric list on datacenter and GeForce Blackwell,
// golden like Hopper's above, and what each tensor sub-pipe counts there by CUPTI's own words:
// GB100's hmma sub-pipe counts tcgen05's UTCHMMA (.kind::f16, ::tf32), UTCQMMA (::f8f6f4,
// ::mxf8f6f4) and UTCOMMA (::mxf4nvf4), its imma sub-pipe UTCIMMA (::i8); GB202's count mma.sync's
// QMMA and OMMA (the FP8/FP6/FP4 kinds). So every bench_tensor_peak row of the chip lands in a
// sub-pipe the table reads (tests/sass/sass_rules.json has the opcodes of each row).
std::vector<std::string_view> counters_of(std::string_view chip) {
  const ChipMetrics cm = *metrics_for_chip(chip);
  std::vector<std::string_view> out;
  for (const Metric& m : cm.metrics) out.push_back(m.counter);
  return out;
}

std::string described(ProfilerHost& host, std::string_view counter) {
  const ChipMetrics cm = *metrics_for_chip(host.chip());
  for (const Metric& m : cm.metrics)
    if (m.counter == counter) return host.description(base_name(m.name));
  ADD_FAILURE() << host.chip() << " has no " << counter;
  return "";
}

TEST(MetricTable, DatacenterBlackwellSubPipesCountTheTcgen05Instructions) {
  EXPECT_EQ(counters_of("GB100"),
            (std::vector<std::string_view>{"tensor_active_pct", "tensor_hmma_pct",
                                           "tensor_imma_pct", "tensor_dmma_pct",
                                           "sm_throughput_pct", "dram_throughput_pct"}));
  ProfilerHost host("GB100");
  const std::string hmma = described(host, "tensor_hmma_pct");
  for (const char* op : {"HMMA", "UTCHMMA", "UTCQMMA", "UTCOMMA"})
    EXPECT_NE(hmma.find(op), std::string::npos) << "GB100 hmma: " << hmma;
  const std::string imma = described(host, "tensor_imma_pct");
  EXPECT_NE(imma.find("UTCIMMA"), std::string::npos) << "GB100 imma: " << imma;
}

TEST(MetricTable, GeForceBlackwellSubPipesCountItsMmaKinds) {
  EXPECT_EQ(counters_of("GB202"), (std::vector<std::string_view>{
                                      "tensor_active_pct", "tensor_hmma_pct", "tensor_imma_pct",
                                      "sm_throughput_pct", "dram_throughput_pct"}));
  ProfilerHost host("GB202");
  const std::string hmma = described(host, "tensor_hmma_pct");
  for (const char* op : {"HMMA", "QMMA", "OMMA"})
    EXPECT_NE(hmma.find(op), std::string::npos) << "GB202 hmma: " << hmma;
  EXPECT_EQ(hmma.find("UTC"), std::string::npos) << "GB202 has no tcgen05: " << hmma;
}

TEST(MetricTable, IntegratedChipsHaveNoDramThroughput) {
  for (std::string_view chip : {"GA10B", "GB10B", "GB20B"}) {
    const ChipMetrics cm = *metrics_for_chip(chip);
    for (const Metric& m : cm.metrics) EXPECT_NE(m.counter, "dram_throughput_pct") << chip;
  }
}

}  // namespace
}  // namespace tcbench::profiling
