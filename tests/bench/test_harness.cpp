// The bench layer on the host: the command line (usage errors before any GPU check), the
// sampling policy (at least 10 samples, whatever the time budget), the warm-up by time, and
// listing without a GPU.
#include "tcbench/bench/flags.hpp"
#include "tcbench/bench/harness.hpp"
#include "tcbench/bench/help.hpp"
#include "tcbench/gemm_types.hpp"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <type_traits>
#include <utility>

namespace tcbench::bench {
namespace {

ParseResult parse(std::vector<std::string> args) {
  args.insert(args.begin(), "bench_x");
  return parse_command_line(args);
}

TEST(CommandLine, TcbenchFlagsAreTakenOutAndTheRestPassedOn) {
  const ParseResult r = parse({"--quick", "--benchmark_filter=fp16", "--benchmark_min_time=0.25s"});
  ASSERT_FALSE(r.error) << *r.error;
  EXPECT_TRUE(r.line.quick);
  ASSERT_TRUE(r.line.min_time_seconds);
  EXPECT_DOUBLE_EQ(*r.line.min_time_seconds, 0.25);
  // The filter stays with tcbench (name_filter.hpp); the minimum time goes on as a number.
  ASSERT_TRUE(r.line.filter);
  EXPECT_EQ(r.line.filter->spec(), "fp16");
  EXPECT_EQ(r.line.passthrough.size(), 2u);
  EXPECT_EQ(r.line.passthrough[0], "bench_x");
  EXPECT_TRUE(parse({"--benchmark_list_tests"}).line.list_tests);
  EXPECT_TRUE(parse({"--benchmark_list_tests=true"}).line.list_tests);
  EXPECT_FALSE(parse({"--benchmark_list_tests=false"}).line.list_tests);
  // --plan is tcbench's: taken out, never passed to Google Benchmark.
  const ParseResult plan = parse({"--plan", "--quick"});
  EXPECT_TRUE(plan.line.plan);
  EXPECT_EQ(plan.line.passthrough, std::vector<std::string>{"bench_x"});
  EXPECT_FALSE(parse({"--quick"}).line.plan);
}

TEST(CommandLine, ClockPolicyIsTcbenchsOwnFlag) {
  EXPECT_EQ(parse({}).line.clock_policy, ClockPolicy::as_is);
  const ParseResult r = parse({"--clock-policy=max", "--benchmark_repetitions=2"});
  ASSERT_FALSE(r.error) << *r.error;
  EXPECT_EQ(r.line.clock_policy, ClockPolicy::max);
  // Not passed on: Google Benchmark would reject it as unknown.
  EXPECT_EQ(r.line.passthrough, (std::vector<std::string>{"bench_x", "--benchmark_repetitions=2"}));
  EXPECT_EQ(parse({"--clock-policy=base"}).line.clock_policy, ClockPolicy::base);
  EXPECT_EQ(parse({"--clock-policy=as-is"}).line.clock_policy, ClockPolicy::as_is);
}

// Issue 34: Google Benchmark echoed an unknown flag as it was, escape sequences and all.
TEST(CommandLine, AnArgumentWithAControlCharacterIsRefusedEscaped) {
  for (const std::string arg : {"--benchmark_filter=fp16\x1b[2K", "--bogus\nPASS", "x\x7f"}) {
    const ParseResult r = parse({arg});
    ASSERT_TRUE(r.error) << arg;
    EXPECT_NE(r.error->find("argument 1 ('"), std::string::npos) << *r.error;
    EXPECT_NE(r.error->find("') holds a control character"), std::string::npos) << *r.error;
    for (const char ch : *r.error) EXPECT_TRUE(ch >= 0x20 && ch < 0x7f) << *r.error;
  }
  EXPECT_FALSE(parse({"--benchmark_filter=fp16/m:4096"}).error);
}

// Each of these exited 0 or ran (or printed "no GPU" and exited 77) before: Google Benchmark
// only notices some of them after the device check, and accepts an unknown output format.
TEST(CommandLine, UsageErrorsAreOneSentence) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"--benchmark_filter=(", "unclosed '('"},
      {"--benchmark_filter=[[:alpha:]-z]", "regular expression"},
      {"--benchmark_repetitions=-3", "whole number from 1 to 100000"},
      {"--benchmark_repetitions=abc", "whole number from 1 to 100000"},
      {"--benchmark_out_format=xml", "console, json or csv"},
      {"--benchmark_format=yaml", "console, json or csv"},
      {"--benchmark_min_time=-1", "seconds from 0 to 1000000, written like 0.5 or 0.5s"},
      {"--benchmark_min_time=fast", "seconds from 0 to 1000000"},
      {"--benchmark_repetitions=100001", "whole number from 1 to 100000"},
      {"--benchmark_min_time=2e6", "seconds from 0 to 1000000"},
      {"--benchmark_min_time=10x", "seconds from 0 to 1000000"},
      // Google Benchmark 1.7 printed its whole usage and exited 0 on an unknown unit.
      {"--benchmark_time_unit=fortnight", "ns, us, ms or s"},
      {"--benchmark_time_unit=", "ns, us, ms or s"},
      {"--benchmark_list_tests=maybe", "true or false"},
      {"--clock-policy=turbo", "as-is, base or max"},
      {"--clock-policy", "as-is, base or max"}};
  for (const auto& [flag, words] : bad) {
    const ParseResult r = parse({flag});
    ASSERT_TRUE(r.error) << flag << " was accepted";
    EXPECT_NE(r.error->find(words), std::string::npos) << *r.error;
    EXPECT_EQ(r.error->back(), '.') << *r.error;
  }
}

TEST(CommandLine, TimeUnitsGoogleBenchmarkKnowsArePassedOn) {
  for (const char* unit : {"ns", "us", "ms", "s"}) {
    const ParseResult r = parse({std::string("--benchmark_time_unit=") + unit});
    ASSERT_FALSE(r.error) << *r.error;
    EXPECT_EQ(r.line.passthrough.back(), std::string("--benchmark_time_unit=") + unit);
  }
}

TEST(CommandLine, HelpWinsOverEveryOtherArgument) {
  for (const char* flag : {"--help", "-h"}) {
    const ParseResult r = parse({"--benchmark_filter=(", flag, "--bogus"});
    ASSERT_FALSE(r.error) << *r.error;
    EXPECT_TRUE(r.line.help);
    // Google Benchmark gets --help alone (it prints its usage), whatever was beside it.
    EXPECT_EQ(r.line.passthrough, (std::vector<std::string>{"bench_x", "--help"}));
  }
  EXPECT_FALSE(parse({"--quick"}).line.help);
}

TEST(Help, TheTcbenchPartSaysWhatTheBinaryIsFor) {
  const TopicHelp topic{
      "What a made-up topic shows, in a paragraph long enough to be wrapped "
      "at one hundred columns by the help text, with a last word.",
      "docs/concepts/made-up.md", "TCBENCH_MADE_UP=1,2  extra values to time"};
  const std::string text = help_text("build/dev/bin/bench_made_up", topic);
  EXPECT_EQ(text.rfind("bench_made_up (tcbench)\n", 0), 0u) << text;  // the binary's own name
  for (const char* needle :
       {"in a paragraph", "with a last word.", "docs/concepts/made-up.md", "--quick", "--plan",
        "--clock-policy=as-is|base|max", "--benchmark_min_time=S", "TCBENCH_NVML_LIBRARY",
        "TCBENCH_MADE_UP=1,2", "extra values to time", "Exit codes: 0", "1 a benchmark failed",
        "2 usage error", "77 no CUDA GPU"})
    EXPECT_NE(text.find(needle), std::string::npos) << needle;
  // The budgets it states are the harness's own (docs/methodology.md: 0.5 s, 0.05 s with
  // --quick); it said 0.1 s after --quick had become 0.05 s.
  std::string flat;  // the text with its line breaks and indents as single spaces
  for (std::istringstream words(text); words;) {
    std::string word;
    if (words >> word) flat += (flat.empty() ? "" : " ") + word;
  }
  EXPECT_NE(flat.find("a few sizes per question, 0.05 s per benchmark"), std::string::npos);
  EXPECT_NE(flat.find("(default 0.5 s, 0.05 s with --quick)"), std::string::npos) << text;
  // The topic's variable sits in the same column as the common ones.
  std::map<std::string, std::size_t> column;
  std::istringstream entries(text);
  for (std::string line; std::getline(entries, line);) {
    if (line.rfind("  TCBENCH_MADE_UP=1,2 ", 0) == 0) column["topic"] = line.find("extra values");
    if (line.rfind("  TCBENCH_NVML_LIBRARY=PATH ", 0) == 0) column["nvml"] = line.find("the NVML");
  }
  EXPECT_EQ(column, (std::map<std::string, std::size_t>{{"nvml", 29}, {"topic", 29}})) << text;
  // It ends by announcing Google Benchmark's flags, which follow it.
  const std::string tail = "\nGoogle Benchmark's own flags:\n";
  ASSERT_GT(text.size(), tail.size());
  EXPECT_EQ(text.substr(text.size() - tail.size()), tail);
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);) EXPECT_LE(line.size(), 100u) << line;
}

TEST(Sampling, AtLeastTenSamplesEvenWhenOneExceedsTheBudget) {
  const SamplingPolicy p;  // 10 samples, 0.5 s
  // A 2-second configuration (SIMT 16384^3 on a small GPU) used to stop after one sample.
  EXPECT_FALSE(p.done(1, 2.0));
  EXPECT_FALSE(p.done(9, 18.0));
  EXPECT_TRUE(p.done(10, 20.0));
  // A fast one runs until the budget is met...
  EXPECT_FALSE(p.done(10, 0.001));
  EXPECT_TRUE(p.done(500, 0.5));
  // ...or the sample cap, once the minimum count is there.
  EXPECT_TRUE(p.done(p.max_samples, 0.01));
}

TEST(Sampling, WarmupBatchesCoverTheMissingTime) {
  EXPECT_EQ(warmup_batch_runs(0.001, 0.05), 50);   // 1 ms runs, 50 ms to go
  EXPECT_EQ(warmup_batch_runs(0.1, 0.05), 1);      // one slow run is enough
  EXPECT_EQ(warmup_batch_runs(0.01, 0.0), 0);      // done
  EXPECT_EQ(warmup_batch_runs(1e-9, 0.05), 1000);  // capped per batch
  EXPECT_EQ(warmup_batch_runs(0.0, 0.05), 1000);   // below the timer's resolution
}

TEST(EnvTest, ListingModeHasNoDeviceAndSaysSo) {
  const Env env(RunOptions{});
  EXPECT_FALSE(env.has_device());
  EXPECT_THROW((void)env.device(), NoDevice);
  EXPECT_THROW((void)env.stream(), NoDevice);
}

TEST(PctOfPeak, OneFormula) {
  EXPECT_DOUBLE_EQ(*pct_of_peak(495.0, 990.0), 50.0);
  EXPECT_FALSE(pct_of_peak(1.0, 0.0));
  EXPECT_FALSE(pct_of_peak(std::nan(""), 10.0));
}

// What measure() and report_compute() write from a window's power summary.
TEST(PowerCounters, FromTheWindow) {
  PowerSummary p;
  p.sm_clock_mhz = 1830;
  p.power_w = 350;
  p.temp_c_max = 71;
  p.throttle = 0x4 | 0x8;
  std::map<std::string, double> got;
  for (const auto& [c, v] : power_counters(p, 0.002)) got[c.name()] = v;
  ASSERT_EQ(got.size(), 5u);
  EXPECT_EQ(got["sm_clock_mhz"], 1830.0);
  EXPECT_EQ(got["power_w"], 350.0);
  EXPECT_DOUBLE_EQ(got["energy_j"], 0.7);  // 350 W x 2 ms
  EXPECT_EQ(got["temp_c_max"], 71.0);
  EXPECT_EQ(got["throttle"], 12.0);  // sw_power_cap | hw_slowdown
  // Nothing NVML did not answer: no counter rather than a zero.
  EXPECT_TRUE(power_counters(PowerSummary{}, 0.002).empty());
}

TEST(PowerCounters, EfficiencyAndPeakAtTheMeasuredClock) {
  GpuSpec h100;
  h100.name = "NVIDIA H100 80GB HBM3";
  h100.cc_major = 9;
  h100.sm_count = 132;
  h100.sm_clock_mhz = 1980;
  std::map<std::string, double> got;
  // 700 TFLOP/s FP16 at 350 W and 1830 MHz: 2 TFLOP/s per W, 700 / 989.4 of the silicon.
  for (const auto& [c, v] : efficiency_counters(h100, Precision::fp16, 700.0, 350.0, 1830.0))
    got[c.name()] = v;
  ASSERT_EQ(got.size(), 2u);
  EXPECT_DOUBLE_EQ(got["tflops_per_w"], 2.0);
  EXPECT_NEAR(got["pct_of_peak_at_clock"], 100.0 * 700.0 / 989.4, 0.01);
  got.clear();
  for (const auto& [c, v] : efficiency_counters(h100, Precision::int8, 1400.0, 350.0, std::nullopt))
    got[c.name()] = v;
  EXPECT_EQ(got, (std::map<std::string, double>{{"tops_per_w", 4.0}}));  // no clock read
  EXPECT_TRUE(
      efficiency_counters(h100, Precision::fp16, 700.0, std::nullopt, std::nullopt).empty());
}

// GemmTypes<P> and GemmSpec::for_precision(P) must name the same element types.
template <Precision P>
void expect_types_match() {
  const GemmSpec s = GemmSpec::for_precision(P, 64, 64, 64);
  using T = GemmTypes<P>;
  EXPECT_EQ(s.a_type, cuda_data_type_v<typename T::A>) << name(P);
  EXPECT_EQ(s.b_type, cuda_data_type_v<typename T::B>) << name(P);
  EXPECT_EQ(s.c_type, cuda_data_type_v<typename T::C>) << name(P);
  EXPECT_EQ(s.d_type, cuda_data_type_v<typename T::D>) << name(P);
}
// Every row of the precision table, so a new precision is checked without being listed here.
template <std::size_t... I>
void expect_every_precision_matches(std::index_sequence<I...>) {
  (expect_types_match<kAllPrecisions[I]>(), ...);
}
TEST(GemmTypesTest, EveryPrecisionMatchesItsSpec) {
  expect_every_precision_matches(std::make_index_sequence<kNumPrecisions>{});
  static_assert(std::is_same_v<GemmTypes<Precision::int8>::D, std::int32_t>);
  static_assert(std::is_same_v<GemmTypes<Precision::fp8>::A, __nv_fp8_e4m3>);
  // The type the old topic-local Element<P> silently gave INT8 and FP8 inputs.
  static_assert(!std::is_same_v<GemmTypes<Precision::int8>::A, __half>);
}

TEST(GemmTypesTest, RuntimeVisitorCoversEveryStorageType) {
  for (cudaDataType_t t : {CUDA_R_64F, CUDA_R_32F, CUDA_R_16F, CUDA_R_16BF, CUDA_R_8I, CUDA_R_32I,
                           CUDA_R_8F_E4M3, CUDA_R_8F_E5M2}) {
    const cudaDataType_t back =
        visit_data_type(t, []<typename T>(TypeTag<T>) { return cuda_data_type_v<T>; });
    EXPECT_EQ(back, t);
  }
  EXPECT_THROW(visit_data_type(CUDA_R_4F_E2M1, []<typename T>(TypeTag<T>) { return 0; }),
               InvalidArgument);
}

}  // namespace

// Listing mode links a topic; this test binary has none, so give it one that registers a name.
void register_topic(const Env&) {
  register_gpu_benchmark("harness_test/list/fp32/m:1/n:1/k:1/layout:nn",
                         [](benchmark::State& st) { st.SkipWithError("not run"); });
}

}  // namespace tcbench::bench
