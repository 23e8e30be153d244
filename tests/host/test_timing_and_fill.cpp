// Sample statistics, deterministic random fill and error messages, on the host.
#include "tcbench/device_info.hpp"
#include "tcbench/error.hpp"
#include "tcbench/random_fill.hpp"
#include "tcbench/timing.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <cmath>
#include <numeric>
#include <vector>

namespace tcbench {
namespace {

TEST(SampleStatsTest, MatchesNumpyLinearPercentiles) {
  // numpy.percentile([5, 1, 4, 2, 3, 100], [10, 50, 90]) == [1.5, 3.5, 52.5]
  const std::vector<double> v = {5, 1, 4, 2, 3, 100};
  const SampleStats s = compute_stats(v);
  EXPECT_EQ(s.count, 6u);
  EXPECT_DOUBLE_EQ(s.min, 1);
  EXPECT_DOUBLE_EQ(s.max, 100);
  EXPECT_DOUBLE_EQ(s.median, 3.5);
  EXPECT_DOUBLE_EQ(s.p10, 1.5);
  EXPECT_DOUBLE_EQ(s.p90, 52.5);
  EXPECT_NEAR(s.mean, 115.0 / 6.0, 1e-12);
  // numpy.std(v, ddof=1)
  EXPECT_NEAR(s.stddev, 39.62532860, 1e-6);
  EXPECT_NEAR(s.rel_spread(), (52.5 - 1.5) / 3.5, 1e-12);
}

TEST(SampleStatsTest, OneSlowSampleDoesNotMoveTheMedian) {
  std::vector<double> v(21, 1.0);
  v[3] = 50.0;
  EXPECT_DOUBLE_EQ(compute_stats(v).median, 1.0);
  EXPECT_GT(compute_stats(v).mean, 3.0);
}

TEST(SampleStatsTest, EmptyAndSingle) {
  EXPECT_EQ(compute_stats({}).count, 0u);
  const std::vector<double> one = {2.5};
  const SampleStats s = compute_stats(one);
  EXPECT_DOUBLE_EQ(s.median, 2.5);
  EXPECT_DOUBLE_EQ(s.stddev, 0.0);
}

TEST(RandomFill, DeterministicAndSeedDependent) {
  std::vector<float> a(1000), b(1000), c(1000);
  const auto d = Distribution::uniform(-1, 1);
  fill_random_host<float>(a, d, 7);
  fill_random_host<float>(b, d, 7);
  fill_random_host<float>(c, d, 8);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);
}

TEST(RandomFill, UniformRangeAndMomentsNeverAllZero) {
  std::vector<float> v(200000);
  fill_random_host<float>(v, Distribution::uniform(-1, 1), 1);
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  EXPECT_GE(*lo, -1.0f);
  EXPECT_LT(*hi, 1.0f);
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double var = 0;
  for (float x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size());
  EXPECT_NEAR(mean, 0.0, 0.01);
  EXPECT_NEAR(var, 1.0 / 3.0, 0.01);  // variance of U(-1, 1)
  EXPECT_LT(std::count(v.begin(), v.end(), 0.0f), 5);
}

TEST(RandomFill, NormalMoments) {
  std::vector<float> v(200000);
  fill_random_host<float>(v, Distribution::normal(2.0f, 3.0f), 3);
  double mean = 0, var = 0;
  for (float x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (float x : v) var += (x - mean) * (x - mean);
  var /= static_cast<double>(v.size());
  EXPECT_NEAR(mean, 2.0, 0.05);
  EXPECT_NEAR(std::sqrt(var), 3.0, 0.05);
}

TEST(RandomFill, OutliersAreRareAndLarge) {
  std::vector<float> v(1 << 20);
  fill_random_host<float>(v, Distribution::activations_with_outliers(1024, 50.0f), 5);
  const auto big = std::count_if(v.begin(), v.end(), [](float x) { return std::fabs(x) > 8.0f; });
  // N(0,1) essentially never exceeds 8; about 1/1024 of elements are scaled by 50, and of those
  // the ones with |z| > 0.16 exceed 8 (~87%).
  const double expected = static_cast<double>(v.size()) / 1024.0 * 0.87;
  EXPECT_NEAR(static_cast<double>(big), expected, expected * 0.15);
}

TEST(RandomFill, IntegersAreExactAndInRange) {
  std::vector<std::int8_t> q(10000);
  fill_random_host<std::int8_t>(q, Distribution::integers(-127, 127), 9);
  int seen_min = 0, seen_max = 0;
  for (auto x : q) {
    seen_min = std::min<int>(seen_min, x);
    seen_max = std::max<int>(seen_max, x);
  }
  EXPECT_EQ(seen_min, -127);
  EXPECT_EQ(seen_max, 127);
  std::vector<__nv_fp8_e4m3> f8(1000);
  fill_random_host<__nv_fp8_e4m3>(f8, Distribution::integers(-8, 8), 9);
  for (auto x : f8) {
    const float f = static_cast<float>(x);
    EXPECT_EQ(f, std::round(f));
    EXPECT_LE(std::fabs(f), 8.0f);
  }
}

TEST(ErrorMessages, NameTheStatusAndTheCall) {
  try {
    TCB_CUDA_CTX(cudaErrorMemoryAllocation, "allocating 42 bytes");
    FAIL() << "no throw";
  } catch (const Error& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("cudaErrorMemoryAllocation"), std::string::npos) << msg;
    EXPECT_NE(msg.find("allocating 42 bytes"), std::string::npos) << msg;
    EXPECT_NE(msg.find("test_timing_and_fill.cpp"), std::string::npos) << msg;
  }
  try {
    TCB_CUBLAS(CUBLAS_STATUS_NOT_SUPPORTED);
    FAIL() << "no throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos);
  }
}

TEST(DeviceInfoTest, NoGpuBecomesNoDeviceWithAReason) {
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess && count > 0) GTEST_SKIP() << "a GPU is present";
  try {
    (void)require_device();
    FAIL() << "require_device() returned without a GPU";
  } catch (const NoDevice& e) {
    EXPECT_NE(std::string(e.what()).find("no CUDA GPU"), std::string::npos) << e.what();
  }
}

TEST(DeviceInfoTest, VersionsFormat) {
  EXPECT_EQ(format_cuda_version(13000), "13.0");
  EXPECT_EQ(format_cuda_version(12090), "12.9");
}

}  // namespace
}  // namespace tcbench

namespace tcbench {
namespace {

// The run context is built from DeviceInfo alone, so it is testable without a GPU.
TEST(DeviceInfoTest, ContextCarriesTheSchemaKeys) {
  DeviceInfo info;
  info.spec = GpuSpec{"NVIDIA H100 80GB HBM3", 9, 0, 132, 1980.0, 2619.0, 5120};
  info.l2_bytes = 50 * 1024 * 1024;
  info.driver_version = 13000;
  info.runtime_version = 13000;
  info.cublaslt_version = 130000;
  std::map<std::string, std::string> kv;
  for (const auto& [k, v] : info.context()) kv[k] = v;
  for (const char* key : {"gpu_name", "compute_capability", "sm_count", "sm_clock_mhz",
                          "mem_clock_mhz", "mem_bus_bits", "l2_bytes", "driver_version",
                          "cuda_runtime", "cublaslt_version", "peak_gbps", "peak_source",
                          "peak_fp16", "peak_fp16_max_clock", "peak_fp16_source", "peak_fp32"})
    EXPECT_TRUE(kv.count(key)) << "missing context key " << key;
  EXPECT_EQ(kv["compute_capability"], "9.0");
  EXPECT_EQ(kv["driver_version"], "13.0");
  // Datasheet denominator for a known product (989.4 TFLOP/s dense FP16, H100 SXM datasheet),
  // the max-clock model beside it (132 x 4096 x 1.98 GHz = 1070.5).
  EXPECT_NEAR(std::stod(kv["peak_fp16"]), 989.4, 5.0);
  EXPECT_NEAR(std::stod(kv["peak_fp16_max_clock"]), 1070.5, 1.0);
  EXPECT_EQ(kv["peak_fp16_source"], "datasheet");
  EXPECT_NE(kv["peak_source"], "max-clock");

  DeviceInfo unknown = info;
  unknown.spec.name = "Some Future GPU";
  std::map<std::string, std::string> kv2;
  for (const auto& [k, v] : unknown.context()) kv2[k] = v;
  EXPECT_EQ(kv2["peak_fp16_source"], "max-clock");
  EXPECT_EQ(kv2["peak_source"], "max-clock");
  EXPECT_EQ(kv2["peak_fp16"], kv2["peak_fp16_max_clock"]);
}

}  // namespace
}  // namespace tcbench
