// measure()'s window rule against the Google Benchmark this build links (Debian's 1.7.1 in CI):
// Google Benchmark calls a manual-time body several times to size a run, and each of those calls
// must reuse one sampling window, while every repetition and every other benchmark measures
// anew. The bodies here stand in for measure(): detail::measure_window with a sampler that
// counts its windows and reports a fixed median, so no GPU is needed.
#include "tcbench/bench/flags.hpp"
#include "tcbench/bench/measure.hpp"
#include "tcbench/bench/registry.hpp"
#include "tcbench/schema.hpp"

#include <benchmark/benchmark.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

namespace tcbench::bench {
namespace {

// Collects the runs Google Benchmark reports, and prints nothing.
class Collect final : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs)
      if (r.run_type == Run::RT_Iteration) iterations.push_back(r);
  }
  std::vector<Run> iterations;
};

struct Counts {
  int calls = 0;    // body calls
  int windows = 0;  // sampling windows taken
};

// Registers one stand-in benchmark per median (seconds), runs them with `flags` (tcbench's
// command line, passed on as the linked Google Benchmark takes it) and returns the counts per
// benchmark and what Google Benchmark reported.
std::map<std::string, Counts> run(const std::vector<double>& medians,
                                  std::vector<std::string> flags, Collect* reported = nullptr) {
  benchmark::ClearRegisteredBenchmarks();
  static std::map<std::string, Counts> counts;  // outlives the bodies' registration
  counts.clear();
  for (std::size_t i = 0; i < medians.size(); ++i) {
    const std::string name = "harness_test/windows/fp32/elements:" + std::to_string(i);
    const double median = medians[i];
    register_gpu_benchmark(name, [name, median](benchmark::State& st) {
      Counts& c = counts[name];
      ++c.calls;
      const Window w = detail::measure_window([&] {
        ++c.windows;
        Window x;
        x.seconds.count = 10;
        x.seconds.median = median;
        return x;
      });
      report_precomputed(st, w.seconds.median);
    });
  }
  flags.insert(flags.begin(), "bench_windows");
  const ParseResult parsed = parse_command_line(flags);
  EXPECT_FALSE(parsed.error) << *parsed.error;
  std::vector<std::string> args = parsed.line.passthrough;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  Collect quiet;
  benchmark::RunSpecifiedBenchmarks(reported != nullptr ? reported : &quiet);
  benchmark::ClearRegisteredBenchmarks();
  return counts;
}

const char* kQuickTime = "--benchmark_min_time=0.05";  // gpu_check's and `tcbench run --quick`'s

TEST(MeasureWindows, SizingCallsShareOneWindowPerRepetition) {
  // 10 us, 0.9 ms and 6 ms medians: Google Benchmark 1.7.1 sizes them with 5, 3 and 2 body calls
  // (iterations 1, 10, 100, 1000, then what fills 0.05 s), the review's counts. Before, a window
  // was kept for the next call only: 4, 2 and 1 windows.
  Collect reported;
  const auto c = run({10e-6, 0.9e-3, 6e-3}, {kQuickTime}, &reported);
  ASSERT_EQ(c.size(), 3u);
  const Counts tiny = c.at("harness_test/windows/fp32/elements:0");
  const Counts mid = c.at("harness_test/windows/fp32/elements:1");
  const Counts slow = c.at("harness_test/windows/fp32/elements:2");
  EXPECT_GE(tiny.calls, 4);  // the sizing Google Benchmark does: several calls...
  EXPECT_GT(tiny.calls, mid.calls);
  EXPECT_GE(slow.calls, 2);
#ifdef TCBENCH_GBENCH_VERSION
  if (std::string(TCBENCH_GBENCH_VERSION).rfind("1.7.", 0) == 0) {  // Debian 12's, CI's
    EXPECT_EQ(tiny.calls, 5);
    EXPECT_EQ(mid.calls, 3);
    EXPECT_EQ(slow.calls, 2);
  }
#endif
  EXPECT_EQ(tiny.windows, 1);  // ...and one window each
  EXPECT_EQ(mid.windows, 1);
  EXPECT_EQ(slow.windows, 1);
  // Each reported row is its window's median, per iteration.
  ASSERT_EQ(reported.iterations.size(), 3u);
  EXPECT_NEAR(reported.iterations[0].GetAdjustedRealTime(), 10e-6 * 1e3, 1e-9);  // in ms
  EXPECT_NEAR(reported.iterations[2].GetAdjustedRealTime(), 6.0, 1e-6);
}

TEST(MeasureWindows, EveryRepetitionMeasuresAnew) {
  // The repetitions are what `compare` tests: each must be its own window.
  for (const double median : {10e-6, 0.9e-3, 0.2}) {
    const auto c = run({median}, {kQuickTime, "--benchmark_repetitions=3"});
    const Counts got = c.at("harness_test/windows/fp32/elements:0");
    EXPECT_EQ(got.windows, 3) << median << " s median, " << got.calls << " calls";
  }
}

// bench_tensor_peak's clock, with stand-ins: every body call first runs a correctness launch,
// which writes its clock where the kernel writes clocks, then measure(); the timed launches run
// in the window, which later sizing calls reuse without launching. The reported row is the last
// call's. The "device" is a number each launch overwrites: the check runs at 1000 MHz, the
// timed launches of window w at 1400 + w MHz (a power-capped steady state below the burst).
struct PeakStandIn {
  double clocks = 0;  // the clocks buffer
  int windows = 0;
  void check_launch() { clocks = 1000; }
  Window measured(const MeasureOptions& options) {
    return detail::measure_window([&] {
      ++windows;
      clocks = 1400 + windows;  // the samples' launches
      Window w;
      w.seconds.count = 10;
      w.seconds.median = 10e-6;  // 5 sizing calls at --benchmark_min_time=0.05
      detail::finish_window(w, options);
      return w;
    });
  }
};

double reported_clock(bool read_in_window) {
  benchmark::ClearRegisteredBenchmarks();
  static PeakStandIn gpu;
  gpu = {};
  static bool in_window;
  in_window = read_in_window;
  register_gpu_benchmark("harness_test/peak_clock/fp16", [](benchmark::State& st) {
    gpu.check_launch();
    MeasureOptions options;
    if (in_window) options.read_after = [] { return gpu.clocks; };
    const Window w = gpu.measured(options);
    report_precomputed(st, w.seconds.median);
    // 5820cfe read the buffer after measure(): the check launch's clock in a reused window.
    set_counter(st, counters::clock_mhz_measured, in_window ? *w.read_after : gpu.clocks);
  });
  std::vector<std::string> args = {"bench_windows", kQuickTime, "--benchmark_repetitions=1",
                                   "--benchmark_enable_random_interleaving=false"};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  Collect reported;
  benchmark::RunSpecifiedBenchmarks(&reported);
  benchmark::ClearRegisteredBenchmarks();
  EXPECT_EQ(gpu.windows, 1);
  EXPECT_EQ(reported.iterations.size(), 1u);
  if (reported.iterations.empty()) return 0;
  return reported.iterations[0].counters.at(std::string(counters::clock_mhz_measured.name)).value;
}

TEST(MeasureWindows, AValueReadAfterTheSamplesIsTheTimedLaunchesEvenInAReusedWindow) {
  EXPECT_EQ(reported_clock(true), 1401);  // the one window's timed launches
  // The mechanism this guards against: the buffer read after measure() in the reported call
  // holds the correctness launch's clock, since that call reused the window and launched none.
  EXPECT_EQ(reported_clock(false), 1000);
}

TEST(MeasureWindows, InterleavedRepetitionsOfTwoBenchmarksDoNotShareWindows) {
  const auto c = run({10e-6, 10e-6}, {kQuickTime, "--benchmark_repetitions=2",
                                      "--benchmark_enable_random_interleaving=true"});
  EXPECT_EQ(c.at("harness_test/windows/fp32/elements:0").windows, 2);
  EXPECT_EQ(c.at("harness_test/windows/fp32/elements:1").windows, 2);
}

}  // namespace
}  // namespace tcbench::bench
