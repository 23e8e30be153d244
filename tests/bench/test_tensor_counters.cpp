// What a row keeps when its CUPTI counters fail (benchmarks/tensor_counters.hpp), with a
// stand-in profiler in place of profiling::collect_counters, through Google Benchmark's own
// reporting: before, any profiler error other than "counters unavailable" turned the row into a
// benchmark error, which Google Benchmark 1.7 writes with real_time 0 and no counters, so the
// TFLOP/s measured just before was lost.
#include "tcbench/bench/flags.hpp"
#include "tensor_counters.hpp"

#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace tcbench::bench {
namespace {

class Collect final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) rows[r.benchmark_name()] = r;
  }
  std::map<std::string, Run> rows;
};

// The stand-in profiler: what each key's "collection" does, and how often it was asked.
struct StandIn {
  std::map<std::string, int> calls;
  CollectCounters collect(const std::string& key, std::function<profiling::Counters()> result) {
    return [this, key, result](const std::function<void()>&, int) {
      ++calls[key];
      return result();
    };
  }
};

// One row per stand-in: 10 us manual time, tflops 500, then the counters.
Collect run_rows(
    StandIn& profiler,
    const std::vector<std::pair<std::string, std::function<profiling::Counters()>>>& rows) {
  benchmark::ClearRegisteredBenchmarks();
  static const Env listing{RunOptions{}};  // no device: the stand-in never runs the work
  for (const auto& [key, result] : rows) {
    const CollectCounters collect = profiler.collect(key, result);
    register_gpu_benchmark(key, [key, collect](benchmark::State& st) {
      report_precomputed(st, 10e-6);
      set_counter(st, counters::tflops, 500.0);
      st.SetLabel(
          with_counter_note("HGMMA", add_tensor_counters(
                                         st, listing, key, [](cudaStream_t) {}, 1, collect)));
    });
  }
  std::vector<std::string> args =
      parse_command_line({"bench_counters", "--benchmark_min_time=0.05"}).line.passthrough;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  Collect reported;
  benchmark::RunSpecifiedBenchmarks(&reported);
  benchmark::ClearRegisteredBenchmarks();
  return reported;
}

[[noreturn]] profiling::Counters cupti_fails() {
  // What TCB_CUPTI throws for a status availability.cpp does not map.
  throw ApiError(
      "CUPTI call failed with CUPTI_ERROR_UNKNOWN: cuptiRangeProfilerDecodeData(&decode) at "
      "range_profiler.cpp:355",
      "CUPTI", "CUPTI_ERROR_UNKNOWN", "cuptiRangeProfilerDecodeData(&decode)");
}

TEST(TensorCounters, AProfilerErrorKeepsTheRowsTimingAndNamesTheStatusAndCall) {
  StandIn profiler;
  const int errors_before = error_count();
  const Collect got = run_rows(
      profiler,
      {{"counters_test/cupti/fp16", cupti_fails},
       {"counters_test/plan/fp16",
        []() -> profiling::Counters {
          throw Error("CUPTI dropped 1 profiled range(s) on chip GH100");
        }},
       {"counters_test/unavailable/fp16",
        []() -> profiling::Counters {
          throw profiling::CountersUnavailable("GPU performance counters are restricted");
        }},
       {"counters_test/read/fp16", [] {
          return profiling::Counters{"GH100", 8, 1, {{"tensor_active_pct", "sm__pipe", 87.5}}};
        }}});
  ASSERT_EQ(got.rows.size(), 4u);
  for (const auto& [name, row] : got.rows) {
    // Every row is a measurement: no error, its time and rate as reported before the counters.
    EXPECT_FALSE(row.error_occurred) << name << ": " << row.error_message;
    EXPECT_NEAR(row.GetAdjustedRealTime(), 10e-6 * 1e3, 1e-9) << name;  // ms
    ASSERT_TRUE(row.counters.count("tflops")) << name;
    EXPECT_EQ(row.counters.at("tflops").value, 500.0) << name;
  }
  const auto& cupti = got.rows.at("counters_test/cupti/fp16/manual_time");
  EXPECT_EQ(cupti.counters.at("counters_error").value, 1.0);
  EXPECT_EQ(cupti.report_label,
            "HGMMA; counters error: CUPTI_ERROR_UNKNOWN from cuptiRangeProfilerDecodeData");
  const auto& plan = got.rows.at("counters_test/plan/fp16/manual_time");
  EXPECT_EQ(plan.counters.at("counters_error").value, 1.0);
  EXPECT_NE(plan.report_label.find("counters error: CUPTI dropped 1 profiled range"),
            std::string::npos)
      << plan.report_label;
  // "Unavailable" is no defect: a skip note, no counters_error.
  const auto& unavailable = got.rows.at("counters_test/unavailable/fp16/manual_time");
  EXPECT_FALSE(unavailable.counters.count("counters_error"));
  EXPECT_EQ(unavailable.report_label,
            "HGMMA; counters skipped: GPU performance counters are restricted");
  const auto& read = got.rows.at("counters_test/read/fp16/manual_time");
  EXPECT_EQ(read.counters.at("tensor_active_pct").value, 87.5);
  EXPECT_EQ(read.counters.at("profile_passes").value, 8.0);
  EXPECT_EQ(read.report_label, "HGMMA");
  // Each configuration's counters are asked for once, however often Google Benchmark calls the
  // body (a failure is not retried per call), and each failure counts once: exit 1 at the end.
  for (const auto& [key, n] : profiler.calls) EXPECT_EQ(n, 1) << key;
  EXPECT_EQ(error_count() - errors_before, 2);
}

TEST(TensorCounters, TheCalledFunctionOfACuptiCheck) {
  EXPECT_EQ(called_function("available(cuptiProfilerInitialize(&p))"), "cuptiProfilerInitialize");
  EXPECT_EQ(called_function("cuptiRangeProfilerPopRange(&pop)"), "cuptiRangeProfilerPopRange");
  EXPECT_EQ(called_function("something()"), "something");
}

}  // namespace
}  // namespace tcbench::bench
