// The GEMM cases the harness builds, on the host: a speed-up's denominator is the same problem
// (layout and leading dimensions) in the other precision, the names carry the layout, the skip
// contract, the once-per-process cache, the one speed-up writer and labelled cases behave as the
// topics rely on.
#include "tcbench/bench/harness.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace tcbench::bench {
namespace {

using P = Precision;

bool same_problem(const GemmProblem& a, const GemmProblem& b) {
  return a.m == b.m && a.n == b.n && a.k == b.k && a.trans_a == b.trans_a &&
         a.trans_b == b.trans_b && a.lda == b.lda && a.ldb == b.ldb && a.ldc == b.ldc &&
         a.ldd == b.ldd;
}

// Before issue 17, bench_fp8 divided TN FP8 by an NN BF16 baseline and bench_int8_gemm TN INT8
// by NN FP32/FP16 (GemmCase::for_precision(base, m, n, k) for the denominator). baseline_case is
// now the only way a speed-up's denominator is built; it must keep every case's problem.
TEST(BaselineCase, KeepsTheCaseLayoutAndLeadingDimensionsForEveryPair) {
  for (P p : kAllPrecisions)
    for (P base : kAllPrecisions)
      for (const bool ta : {false, true})
        for (const bool tb : {false, true}) {
          GemmCase c = GemmCase::for_precision(p, 256, 33, 512);
          c.spec.problem.trans_a = ta;
          c.spec.problem.trans_b = tb;
          c.spec.problem.lda = 1024;
          c.spec.problem.ldb = 640;
          c.speedup_vs = {base};
          c.a_scale = 0.5f;  // scales and inputs are the case's own, not the baseline's
          const GemmCase b = baseline_case(c, base);
          EXPECT_TRUE(same_problem(b.spec.problem, c.spec.problem))
              << name(p) << " vs " << name(base) << ": " << b.spec.problem.describe() << " is not "
              << c.spec.problem.describe();
          EXPECT_EQ(b.precision, base);
          EXPECT_EQ(b.spec.a_type, info(base).a);
          EXPECT_EQ(b.spec.d_type, info(base).d);
          EXPECT_EQ(b.spec.compute_type, info(base).compute);
          EXPECT_EQ(b.a_scale, 1.0f);
          EXPECT_TRUE(b.speedup_vs.empty());
          EXPECT_EQ(layout_name(b.spec.problem), layout_name(c.spec.problem));
        }
}

// A batched case's denominator is the same batch: a ratio must never set 33 matrices against
// one, nor packed matrices against strided ones.
TEST(BaselineCase, KeepsTheBatchAndItsStrides) {
  for (P p : kAllPrecisions)
    for (P base : kAllPrecisions) {
      GemmCase c = GemmCase::for_precision(p, 128, 128, 65);
      c.spec.batch_count = 33;
      c.spec.stride_a = 20000;
      c.spec.stride_b = 0;  // packed
      c.spec.stride_c = c.spec.stride_d = 128 * 128 + 64;
      const GemmCase b = baseline_case(c, base);
      EXPECT_EQ(b.spec.batch_count, 33) << name(p) << " vs " << name(base);
      EXPECT_EQ(b.spec.stride_a, 20000);
      EXPECT_EQ(b.spec.stride_b, 0);
      EXPECT_EQ(b.spec.stride_c, 128 * 128 + 64);
      EXPECT_EQ(b.spec.stride_d, 128 * 128 + 64);
      EXPECT_DOUBLE_EQ(b.spec.flops(), c.spec.flops());
    }
}

// vs_cublaslt's denominator (run_cublas_gemm) is baseline_case in the case's own precision: the
// cuBLASLt GEMM of the very same problem, types, compute type and batch.
TEST(BaselineCase, TheCublasCaseInItsOwnPrecisionIsTheSameGemm) {
  for (P p : {P::fp32, P::tf32, P::fp16, P::fp16_acc16, P::bf16, P::int8}) {
    GemmCase c = GemmCase::for_precision(p, 4096, 33, 4096);
    c.spec.batch_count = 2;
    const GemmCase lt = baseline_case(c, p);
    EXPECT_TRUE(same_problem(lt.spec.problem, c.spec.problem)) << name(p);
    EXPECT_EQ(lt.spec.describe(), c.spec.describe()) << name(p);
    EXPECT_EQ(lt.precision, p);
  }
}

// The pre-fix construction, kept as the counterexample the test above rules out.
TEST(BaselineCase, ThePrecisionDefaultWouldHaveChangedTheLayout) {
  const GemmCase fp8 = GemmCase::for_precision(P::fp8, 4096, 4096, 4096);  // TN
  EXPECT_EQ(layout_name(fp8.spec.problem), "tn");
  EXPECT_EQ(layout_name(GemmCase::for_precision(P::bf16, 4096, 4096, 4096).spec.problem), "nn");
  EXPECT_EQ(layout_name(baseline_case(fp8, P::bf16).spec.problem), "tn");
}

TEST(BenchNameTest, GemmNamesCarryTheLayout) {
  GemmProblem p{.m = 4096, .n = 33, .k = 4096};
  EXPECT_EQ(BenchName("alignment", "cublaslt", P::fp16).gemm(p).str(),
            "alignment/cublaslt/fp16/m:4096/n:33/k:4096/layout:nn");
  p.trans_a = true;
  EXPECT_EQ(BenchName("int8_gemm", "cublaslt", P::int8).gemm(p).str(),
            "int8_gemm/cublaslt/int8/m:4096/n:33/k:4096/layout:tn");
  p.trans_a = false;
  p.trans_b = true;
  EXPECT_EQ(layout_name(p), "nt");
  p.trans_a = true;
  EXPECT_EQ(layout_name(p), "tt");
  EXPECT_EQ(BenchName("fp8", "recipe_amax", P::fp8)
                .arg(Key::elements, 16777216)
                .arg(Key::in, "bf16")
                .str(),
            "fp8/recipe_amax/fp8/elements:16777216/in:bf16");
  EXPECT_EQ(BenchName("fp8", "block", "selected").arg(Key::hidden, 4096).str(),
            "fp8/block/selected/hidden:4096");
  // A strided batch: the matrices per call after the GEMM's own keys.
  EXPECT_EQ(BenchName("alignment", "cublas", P::fp16)
                .gemm(GemmProblem{.m = 128, .n = 128, .k = 64})
                .arg(Key::batch, 33)
                .str(),
            "alignment/cublas/fp16/m:128/n:128/k:64/layout:nn/batch:33");
}

TEST(BenchNameTest, ComponentsThatWouldBreakTheGrammarAreRefused) {
  EXPECT_THROW(BenchName("a/b", "v", P::fp16), InvalidArgument);
  EXPECT_THROW(BenchName("t", "v:x", P::fp16), InvalidArgument);
  EXPECT_THROW(BenchName("t", "", P::fp16), InvalidArgument);
  EXPECT_THROW(BenchName("t", "v", P::fp16).arg(Key::layer, "q kv"), InvalidArgument);
  EXPECT_THROW(BenchName("t", "v", P::fp16).arg(Key::recipe, "\x1b[32mPASS"), InvalidArgument);
}

TEST(OnceTest, CachesValuesButNotFailures) {
  int calls = 0;
  const auto make = [&] {
    ++calls;
    return 42;
  };
  EXPECT_EQ(once<int>("test|a", make), 42);
  EXPECT_EQ(once<int>("test|a", make), 42);
  EXPECT_EQ(calls, 1);
  int failures = 0;
  const auto fail = [&]() -> int {
    ++failures;
    throw std::runtime_error("wrong");
  };
  EXPECT_THROW(once<int>("test|b", fail), std::runtime_error);
  EXPECT_THROW(once<int>("test|b", fail), std::runtime_error);
  EXPECT_EQ(failures, 2);  // a failed check fails every time
}

// The skip contract the tools read (results.py SKIP_PREFIX): Skipped becomes "skipped: <why>",
// any other exception "error: <what>" and counts as an error.
class Collect : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      messages.push_back(r.error_message);
      counters.push_back(r.counters);
    }
  }
  std::vector<std::string> messages;
  std::vector<benchmark::UserCounters> counters;
};

TEST(SkipContract, SkippedAndErrorsAreReportedWithTheirPrefix) {
  register_gpu_benchmark("skip_contract/skipped/fp32",
                         [](benchmark::State&) { throw Skipped("FP8 needs 8.9"); });
  register_gpu_benchmark("skip_contract/failed/fp32",
                         [](benchmark::State&) { throw Error("2 of 4 accumulators wrong"); });
  const int errors_before = error_count();
  Collect reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter, "skip_contract/");
  ASSERT_EQ(reporter.messages.size(), 2u);
  EXPECT_EQ(reporter.messages[0], "skipped: FP8 needs 8.9");
  EXPECT_EQ(reporter.messages[1], "error: 2 of 4 accumulators wrong");
  EXPECT_EQ(error_count(), errors_before + 1);
}

// A speed-up a topic measures itself (a sum of layer GEMMs, a study's per-layer times) goes
// through the harness's one writer: base over this, named by the baseline's precision, and
// nothing for a time that is not positive and finite (a NaN ratio would be a silent number).
TEST(ReportSpeedup, WritesTheBaselinesTimeOverThisOneOnlyForRealTimes) {
  register_gpu_benchmark("report_speedup/own/fp8", [](benchmark::State& st) {
    for (auto _ : st) {
    }
    report_speedup(st, P::bf16, 3.0, 1.5);
    report_speedup(st, P::fp16, 0.0, 1.0);
    report_speedup(st, P::fp32, std::nan(""), 1.0);
    report_speedup(st, P::tf32, 1.0, std::numeric_limits<double>::infinity());
  });
  Collect reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter, "report_speedup/");
  ASSERT_EQ(reporter.counters.size(), 1u);
  const benchmark::UserCounters& c = reporter.counters[0];
  ASSERT_EQ(c.count(std::string(counters::speedup_vs(P::bf16).name())), 1u);
  EXPECT_DOUBLE_EQ(c.at(std::string(counters::speedup_vs(P::bf16).name())).value, 2.0);
  for (P p : {P::fp16, P::fp32, P::tf32})
    EXPECT_EQ(c.count(std::string(counters::speedup_vs(p).name())), 0u) << name(p);
}

TEST(LabelledCase, IsTheDefaultCaseWithItsLabel) {
  const GemmShape s{64, 32, 16};
  const GemmCase c = labelled_case("SIMT FFMA")(P::fp32, s);
  const GemmCase d = default_case(P::fp32, s);
  EXPECT_EQ(c.label, "SIMT FFMA");
  EXPECT_TRUE(same_problem(c.spec.problem, d.spec.problem));
  EXPECT_EQ(c.spec.a_type, d.spec.a_type);
  EXPECT_EQ(c.precision, P::fp32);
}

}  // namespace
}  // namespace tcbench::bench
