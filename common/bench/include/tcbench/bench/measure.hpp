// Timing and reporting, owned by the harness: a topic hands over its work and gets the samples'
// statistics back, with the counters already set.
#pragma once

#include "tcbench/bench/env.hpp"
#include "tcbench/bench/regime.hpp"
#include "tcbench/power.hpp"
#include "tcbench/precision.hpp"
#include "tcbench/schema.hpp"
#include "tcbench/timing.hpp"

#include <benchmark/benchmark.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tcbench::bench {

struct MeasureOptions {
  // Flush the L2 before every sample (outside the timed events), so each sample reads its
  // inputs from DRAM as a real layer would. Off for benchmarks that measure cache-resident work.
  bool flush_l2 = true;
  // Called once right after the window's last sample (its stop event synchronized): a value the
  // timed launches left on the device, such as tensor_peak's in-kernel clock. It is kept with the
  // window, so every sizing call that reuses the window reports the value of the launches it
  // reports, never of a launch the body made before measuring (a correctness check).
  std::function<double()> read_after = {};
  // standard: the warm-up and samples below. burst or sustained: a window after idle, launches
  // back to back without a flush (regime.hpp); the row needs NVML.
  Regime regime = Regime::standard;
};

// One measurement: the samples' statistics, what NVML saw while they were taken, and what
// MeasureOptions::read_after returned after the last of them.
struct Window {
  SampleStats seconds;
  std::optional<PowerSummary> power;   // empty without NVML
  std::optional<RegimeReport> regime;  // a burst or sustained window's idle, load and trace
  std::optional<double> read_after;    // empty without a read_after
};

// Timed warm-up (at least 50 ms of work), then samples until the run's SamplingPolicy is met
// (at least 10, and at least its time budget); each sample is one run of `work` between two
// events. Every Google Benchmark iteration gets the median as its manual time, and the counters
// samples, time_median_us, time_p10_us, time_p90_us and spread_pct are set. When NVML answers, a
// background thread reads the GPU every 10 ms while the samples run (tcbench/power.hpp), and
// sm_clock_mhz, power_w, energy_j, temp_c_max and throttle are set too. Call it once per
// body. Google Benchmark calls a body several times to size a run (1, then 10, 100, ...
// iterations: 5 calls for a 10 us median at --benchmark_min_time=0.05); every call after the
// first of one repetition reuses the first call's window (detail::measure_window), so a
// configuration is sampled once per repetition whatever Google Benchmark does. Returns the
// statistics, in seconds.
SampleStats measure(benchmark::State& state, const Env& env,
                    const std::function<void(cudaStream_t)>& work, MeasureOptions options = {});
// measure(), returning the whole window: read_after's value, and a burst or sustained window's
// report, whose counters (idle_s, window_s; settle_s, steady, trace_s and the trace for
// sustained) measure() has set; its sentence is for the row's label (with_regime).
Window measure_window(benchmark::State& state, const Env& env,
                      const std::function<void(cudaStream_t)>& work, MeasureOptions options = {});
// `label` with a burst or sustained window's sentence after it ("; " between); `label` alone
// for a standard window.
std::string with_regime(std::string label, const std::optional<RegimeReport>& regime);

// A time measured elsewhere (a sum of cached medians, a training run's time per step) as every
// iteration's manual time: the one replacement for hand-written SetIterationTime loops.
void report_precomputed(benchmark::State& state, double seconds);

// The one way a benchmark writes a counter: by its schema definition (tcbench/schema.hpp), so
// every name a result file can hold is one the tools know.
void set_counter(benchmark::State& state, const Counter& counter, double value);

// The same samples without touching a benchmark's state (baselines measured inside another
// benchmark).
SampleStats sample_work(const Env& env, const std::function<void(cudaStream_t)>& work,
                        MeasureOptions options = {});

// tflops (tops for integer precisions) = ops / median, and pct_of_peak against the device's peak
// for `p` (the datasheet figure for known products; absent when the table has none). After
// measure() read the power and clock: tflops_per_w (tops_per_w) and pct_of_peak_at_clock (the
// rate against SMs x the measured clock x ops/clock).
void report_compute(benchmark::State& state, const Env& env, Precision p, double ops,
                    const SampleStats& seconds);

// gbps = bytes moved per run / median, and pct_of_peak against the DRAM bandwidth (and
// gbps_per_w after measure() read the power).
void report_bandwidth(benchmark::State& state, const Env& env, double bytes,
                      const SampleStats& seconds);

// The counters one window's power summary gives (sm_clock_mhz, power_w, energy_j = power_w x
// the median time, temp_c_max, throttle), only those it has: measure() writes them.
std::vector<std::pair<Counter, double>> power_counters(const PowerSummary& power,
                                                       double median_seconds);
// The rate's per-watt counter (tflops_per_w / tops_per_w for `p`) and pct_of_peak_at_clock
// (rate against SMs x `sm_clock_mhz` x ops/clock on `gpu`), from what measure() read.
std::vector<std::pair<Counter, double>> efficiency_counters(const GpuSpec& gpu, Precision p,
                                                            double rate,
                                                            std::optional<double> watts,
                                                            std::optional<double> sm_clock_mhz);

namespace detail {
// Which benchmark call is running (set by register_gpu_benchmark's wrapper for measure()).
void set_current_call(const std::string& name, benchmark::IterationCount max_iterations);
// measure()'s window rule: `sample()` once per repetition of the current benchmark; a later call
// of the same benchmark with a larger iteration count (Google Benchmark sizing the run) gets the
// window already taken. Public for the harness test that counts windows against the linked
// Google Benchmark.
Window measure_window(const std::function<Window()>& sample);
// The end of every sampling window: read_after's value, read once after the last sample. Public
// for the host test whose stand-in windows end the way sample_window's do.
void finish_window(Window& window, const MeasureOptions& options);
}  // namespace detail

// The one formula for pct_of_peak (C++ side): 100 * achieved / peak, or nullopt when the peak
// is unknown or zero.
std::optional<double> pct_of_peak(double achieved, double peak);

}  // namespace tcbench::bench
