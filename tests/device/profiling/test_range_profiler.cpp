// The Range Profiler on a real GPU: the tensor pipe is busy for a WMMA GEMM and idle for the
// SIMT one, and a failure inside a profiled range leaves nothing open (the next collection
// works). Nested ranges in one session (the train_step rows' plan): each inner range reads its
// own kernel, the outer one the mix of both, and a pass that departs from the plan is an error
// that leaves nothing open either. Skips without a GPU, and with CUPTI's sentence where counters
// are not allowed.
#include "gpu_test.hpp"

#include "tcbench/cuda_owners.hpp"
#include "tcbench/kernels/gemm_simt.hpp"
#include "tcbench/kernels/gemm_wmma.hpp"
#include "tcbench/profiling/range_profiler.hpp"
#include "tcbench/random_fill.hpp"

#include <cuda_fp16.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace tcbench::profiling {
namespace {

GemmProblem square(std::int64_t n) {
  GemmProblem p;
  p.m = p.n = p.k = n;
  return p.resolve();
}

// Collects, or skips the test with the reason counters cannot be read here.
#define TCB_COLLECT_OR_SKIP(out, work, runs)              \
  Counters out;                                           \
  try {                                                   \
    out = collect_counters(work, runs);                   \
  } catch (const CountersUnavailable& e) {                \
    GTEST_SKIP() << "counters unavailable: " << e.what(); \
  }

TEST(RangeProfiler, TensorPipeBusyForWmmaIdleForSimt) {
  TCB_REQUIRE_GPU(dev);
  const GemmProblem p = square(2048);
  Stream stream;
  DeviceBuffer<__half> ah(p.m * p.k), bh(p.k * p.n), dh(p.m * p.n);
  DeviceBuffer<float> af(p.m * p.k), bf(p.k * p.n), df(p.m * p.n);
  fill_random(ah.get(), ah.size(), Distribution::uniform(-1, 1), 1, stream.get());
  fill_random(bh.get(), bh.size(), Distribution::uniform(-1, 1), 2, stream.get());
  fill_random(af.get(), af.size(), Distribution::uniform(-1, 1), 1, stream.get());
  fill_random(bf.get(), bf.size(), Distribution::uniform(-1, 1), 2, stream.get());
  TCB_CUDA(cudaStreamSynchronize(stream.get()));

  TCB_COLLECT_OR_SKIP(
      wmma, [&] { kernels::gemm_wmma<__half>(p, ah.get(), bh.get(), dh.get(), stream.get()); }, 3);
  TCB_COLLECT_OR_SKIP(
      simt, [&] { kernels::gemm_simt_fp32(p, af.get(), bf.get(), df.get(), stream.get()); }, 1);
  ASSERT_TRUE(wmma.value("tensor_active_pct").has_value());
  EXPECT_GE(wmma.passes, 1u);
  EXPECT_EQ(wmma.runs, 3);
  EXPECT_GT(*wmma.value("tensor_active_pct"), 5.0) << wmma.chip;
  EXPECT_LE(*wmma.value("tensor_active_pct"), 100.5);
  EXPECT_LT(*simt.value("tensor_active_pct"), 1.0) << simt.chip;
  EXPECT_GT(*wmma.value("tensor_hmma_pct"), 5.0);
  EXPECT_LT(*wmma.value("tensor_imma_pct"), 1.0);
}

TEST(RangeProfiler, FailureInsideTheRangeEndsItCleanly) {
  TCB_REQUIRE_GPU(dev);
  const GemmProblem p = square(256);
  DeviceBuffer<float> a(p.m * p.k), b(p.k * p.n), d(p.m * p.n);
  Stream stream;
  fill_random(a.get(), a.size(), Distribution::uniform(-1, 1), 1, stream.get());
  fill_random(b.get(), b.size(), Distribution::uniform(-1, 1), 2, stream.get());
  auto good = [&] { kernels::gemm_simt_fp32(p, a.get(), b.get(), d.get(), stream.get()); };
  int calls = 0;
  auto failing = [&] {
    good();
    if (++calls == 2) throw std::runtime_error("work failed inside the range");
  };
  try {
    (void)collect_counters(failing, 3);
    FAIL() << "the failure was swallowed";
  } catch (const CountersUnavailable& e) {
    GTEST_SKIP() << "counters unavailable: " << e.what();
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "work failed inside the range");
  }
  // Had the range, the range profiler or the profiler session leaked, this would fail with
  // CUPTI_ERROR_INVALID_OPERATION (or similar) instead of collecting.
  const Counters again = collect_counters(good, 1);
  EXPECT_TRUE(again.value("tensor_active_pct").has_value());
}

// An outer range holding a WMMA GEMM and a SIMT GEMM, each in its own nested range.
TEST(RangeProfiler, NestedRangesReadEachKernelAndTheOuterRangeTheirMix) {
  TCB_REQUIRE_GPU(dev);
  const GemmProblem p = square(2048);
  Stream stream;
  DeviceBuffer<__half> ah(p.m * p.k), bh(p.k * p.n), dh(p.m * p.n);
  DeviceBuffer<float> af(p.m * p.k), bf(p.k * p.n), df(p.m * p.n);
  fill_random(ah.get(), ah.size(), Distribution::uniform(-1, 1), 1, stream.get());
  fill_random(bh.get(), bh.size(), Distribution::uniform(-1, 1), 2, stream.get());
  fill_random(af.get(), af.size(), Distribution::uniform(-1, 1), 1, stream.get());
  fill_random(bf.get(), bf.size(), Distribution::uniform(-1, 1), 2, stream.get());
  TCB_CUDA(cudaStreamSynchronize(stream.get()));
  const std::vector<RangeSpec> plan{{"outer", 1}, {"wmma", 2}, {"simt", 2}};
  int calls = 0;
  RangeCounters got;
  try {
    got = collect_range_counters(plan, [&](RangeMarks& m) {
      ++calls;
      m.push("outer");
      m.push("wmma");
      kernels::gemm_wmma<__half>(p, ah.get(), bh.get(), dh.get(), stream.get());
      m.pop();
      m.push("simt");
      kernels::gemm_simt_fp32(p, af.get(), bf.get(), df.get(), stream.get());
      m.pop();
      m.pop();
    });
  } catch (const CountersUnavailable& e) {
    GTEST_SKIP() << "counters unavailable: " << e.what();
  }
  EXPECT_EQ(static_cast<std::size_t>(calls), got.passes);
  EXPECT_GE(got.passes, 2u);  // two nesting levels: at least one pass each
  const double wmma = *got.at("outer/wmma").value("tensor_active_pct");
  const double simt = *got.at("outer/simt").value("tensor_active_pct");
  const double outer = *got.at("outer").value("tensor_active_pct");
  EXPECT_GT(wmma, 5.0) << got.chip;
  EXPECT_LT(simt, 1.0) << got.chip;
  // The outer range sums both kernels' counters: its share lies between theirs.
  EXPECT_GT(outer, simt);
  EXPECT_LT(outer, wmma);
}

TEST(RangeProfiler, APassThatDepartsFromThePlanIsAnErrorAndLeavesNothingOpen) {
  TCB_REQUIRE_GPU(dev);
  const GemmProblem p = square(256);
  DeviceBuffer<float> a(p.m * p.k), b(p.k * p.n), d(p.m * p.n);
  Stream stream;
  fill_random(a.get(), a.size(), Distribution::uniform(-1, 1), 1, stream.get());
  fill_random(b.get(), b.size(), Distribution::uniform(-1, 1), 2, stream.get());
  auto good = [&] { kernels::gemm_simt_fp32(p, a.get(), b.get(), d.get(), stream.get()); };
  const std::vector<RangeSpec> plan{{"outer", 1}, {"inner", 2}};
  try {
    (void)collect_range_counters(plan, [&](RangeMarks& m) {
      m.push("outer");
      good();
      m.push("other");  // not the plan's range
    });
    FAIL() << "a pass pushing 'other' was accepted";
  } catch (const CountersUnavailable& e) {
    GTEST_SKIP() << "counters unavailable: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("pushed range 'other' at level 2"), std::string::npos)
        << e.what();
  }
  try {
    (void)collect_range_counters(plan, [&](RangeMarks& m) {
      m.push("outer");
      good();
      m.pop();  // "inner" never pushed
    });
    FAIL() << "a pass missing 'inner' was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("ended with 1 of the plan's 2 ranges"), std::string::npos)
        << e.what();
  }
  const Counters again = collect_counters(good, 1);
  EXPECT_TRUE(again.value("tensor_active_pct").has_value());
}

}  // namespace
}  // namespace tcbench::profiling
