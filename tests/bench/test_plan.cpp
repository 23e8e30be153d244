// --plan's estimate of a row (common/bench/src/plan.cpp) and the GPU it is made for, without a
// GPU. The goldens are worked out by hand from the H200 datasheet (989.4 dense FP16 TFLOP/s,
// 4.8 TB/s; nvidia.com/en-us/data-center/h200) and the quick suite's 0.05 s sampling budget.
#include "tcbench/bench/flags.hpp"
#include "tcbench/bench/plan.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace {

using tcbench::BenchName;
using tcbench::Key;
using tcbench::named_gpu;
using tcbench::Precision;
using tcbench::bench::plan_row;

tcbench::SamplingPolicy quick() {
  tcbench::SamplingPolicy s;
  s.min_seconds = 0.05;
  return s;
}

TEST(Plan, KnowsTheDatasheetGpusByTheirNamesHoweverWritten) {
  for (const char* name : {"H200", "h200", "NVIDIA H200", "h100-sxm", "H100_SXM", "A100 PCIe"})
    EXPECT_TRUE(named_gpu(name).has_value()) << name;
  for (const char* name : {"", "H2000", "X100", "NVIDIA"})
    EXPECT_FALSE(named_gpu(name).has_value()) << name;
  const auto h200 = *named_gpu("H200");
  EXPECT_EQ(h200.sm_count, 132);
  EXPECT_EQ(h200.cc_major, 9);
  EXPECT_DOUBLE_EQ(h200.dram_gbps, 4800.0);
  EXPECT_DOUBLE_EQ(h200.tflops[tcbench::index_of(Precision::fp16)], 989.4);
}

TEST(Plan, AComputeBoundGemmTakesWhatTheHarnessSpendsAtThePeak) {
  // 2 x 4096^3 = 137,438,953,472 FLOP at 989.4 TFLOP/s: 138.911 us; its 96 MiB at 4.8 TB/s take
  // 21 us, so compute bounds it. 0.05 s / 138.911 us = 359.9: 360 samples, after 0.05 s warm-up.
  const auto h200 = *named_gpu("H200");
  const auto r = plan_row(BenchName("x", "cublaslt", Precision::fp16).gemm({4096, 4096, 4096}),
                          h200, quick(), 1);
  EXPECT_DOUBLE_EQ(r.flops, 137438953472.0);
  EXPECT_DOUBLE_EQ(r.bytes, 100663296.0);
  ASSERT_TRUE(r.median_s);
  EXPECT_NEAR(*r.median_s, 138.91141e-6, 1e-11);
  EXPECT_EQ(r.samples, 360u);
  EXPECT_NEAR(r.seconds, 0.1000081, 1e-7);
  // Every repetition is its own warm-up and window.
  const auto three = plan_row(BenchName("x", "cublaslt", Precision::fp16).gemm({4096, 4096, 4096}),
                              h200, quick(), 3);
  EXPECT_NEAR(three.seconds, 3 * r.seconds, 1e-12);
}

TEST(Plan, AMemoryBoundKernelReadsAndWritesItsElementsOnce) {
  // 2^24 FP32 elements read and written: 134,217,728 B at 4.8 TB/s = 27.962 us; 1789 samples.
  const auto r = plan_row(BenchName("x", "memory", Precision::fp32).arg(Key::elements, 16777216),
                          *named_gpu("H200"), quick(), 1);
  EXPECT_DOUBLE_EQ(r.bytes, 134217728.0);
  ASSERT_TRUE(r.median_s);
  EXPECT_NEAR(*r.median_s, 27.962027e-6, 1e-11);
  EXPECT_EQ(r.samples, 1789u);
}

TEST(Plan, ARowWithoutNamedWorkOrPeakGetsTheHarnessMinimum) {
  const auto h200 = *named_gpu("H200");
  const std::vector<BenchName> rows = {
      BenchName("tensor_peak", "wgmma_m64n256k16", Precision::fp16),        // a loop: no m, n, k
      BenchName("x", "cublaslt", Precision::fp4).gemm({4096, 4096, 4096}),  // no FP4 on H200
  };
  for (const auto& name : rows) {
    const auto r = plan_row(name, h200, quick(), 2);
    EXPECT_FALSE(r.median_s) << name.str();
    EXPECT_EQ(r.samples, 0u);
    EXPECT_DOUBLE_EQ(r.seconds, 2 * (0.05 + 0.05)) << name.str();
  }
}

TEST(Plan, TheJsonLinesStartWithTheGpuAndItsTotalThenOneRowEach) {
  const std::vector<std::string> names = {"x/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn",
                                          "tensor_peak/wgmma_m64n256k16/fp16"};
  const std::string text = tcbench::bench::plan_jsonl(names, *named_gpu("H200"), quick(), 1);
  EXPECT_EQ(text.rfind("{\"gpu\": \"H200\", \"source\": \"datasheet: H200 SXM", 0), 0u) << text;
  EXPECT_NE(text.find("\"rows\": 2, \"seconds\": 0.2000081"), std::string::npos) << text;
  EXPECT_NE(text.find("{\"name\": \"x/cublaslt/fp16/m:4096/n:4096/k:4096/layout:nn\", \"flops\": "
                      "137438953472, \"bytes\": 100663296, \"median_s\": 0.000138911"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("\"median_s\": null, \"samples\": null, \"seconds\": 0.1000000"),
            std::string::npos)
      << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
}

TEST(Plan, NamingAGpuTheTableLacksIsAUsageError) {
  const auto bad = tcbench::bench::parse_command_line({"bench_x", "--plan=X100"});
  ASSERT_TRUE(bad.error);
  EXPECT_NE(bad.error->find("--plan=X100 names no GPU tcbench knows (T4, "), std::string::npos)
      << *bad.error;
  const auto good = tcbench::bench::parse_command_line({"bench_x", "--quick", "--plan=h200"});
  ASSERT_FALSE(good.error);
  EXPECT_TRUE(good.line.plan);
  EXPECT_EQ(good.line.plan_gpu, "h200");
  EXPECT_EQ(good.line.passthrough, std::vector<std::string>{"bench_x"});
  EXPECT_FALSE(tcbench::bench::parse_command_line({"bench_x", "--plan"}).line.plan_gpu);
}

}  // namespace
