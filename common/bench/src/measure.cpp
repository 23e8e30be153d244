#include "tcbench/bench/measure.hpp"

#include "tcbench/cuda_owners.hpp"
#include "tcbench/peaks.hpp"
#include "tcbench/power.hpp"

#include <cstdio>
#include <mutex>
#include <set>
#include <utility>
#include <vector>

namespace tcbench::bench {
namespace {

// Runs `work` `runs` times between one pair of events; returns seconds.
double time_batch(cudaStream_t stream, const std::function<void(cudaStream_t)>& work, int runs,
                  Event& start, Event& stop) {
  start.record(stream);
  for (int i = 0; i < runs; ++i) work(stream);
  stop.record(stream);
  stop.synchronize();
  return static_cast<double>(stop.elapsed_ms_since(start)) * 1e-3;
}

struct CurrentCall {
  std::string name;
  benchmark::IterationCount max_iterations = 0;
};
CurrentCall g_call;

// The window the last measure() took, for every later call of the same benchmark: Google
// Benchmark calls a body again and again with a growing iteration count (1, 10, 100, ... for a
// 10 us median) until the reported time fills --benchmark_min_time, and each of those calls is
// the same configuration. A call with the same name and a larger iteration count continues that
// sizing; a repetition starts again with the count the first one settled on (not larger), and
// another benchmark has another name: both measure anew.
struct LastWindow {
  std::string name;
  benchmark::IterationCount max_iterations = 0;
  Window window;
};
std::optional<LastWindow> g_last;

Window sample_window(const Env& env, const std::function<void(cudaStream_t)>& work,
                     MeasureOptions options) {
  if (options.regime != Regime::standard) {
    RegimeWindow r = take_regime_window(env, work, options.regime);
    Window w{r.seconds, std::move(r.power), std::move(r.report), std::nullopt};
    detail::finish_window(w, options);
    return w;
  }
  const cudaStream_t stream = env.stream();
  const SamplingPolicy& policy = env.options().sampling;
  Event start, stop;

  // Warm-up by time: one run to learn the cost (and absorb lazy loading), then batches until
  // policy.warmup_seconds of work have run.
  double warmed = time_batch(stream, work, 1, start, stop);
  double per_run = warmed;
  for (int runs = warmup_batch_runs(per_run, policy.warmup_seconds - warmed); runs > 0;
       runs = warmup_batch_runs(per_run, policy.warmup_seconds - warmed)) {
    const double t = time_batch(stream, work, runs, start, stop);
    warmed += t;
    per_run = t / runs;
  }

  // Clocks, power and reasons while the samples run (the warm-up ramped the clocks already).
  std::optional<PowerSampler> sampler;
  if (env.device().nvml) {
    sampler.emplace(*env.device().nvml);
    sampler->start();
  }
  std::vector<double> samples;
  double total = 0.0;
  L2Flusher* flusher = options.flush_l2 ? &env.flusher() : nullptr;
  while (!policy.done(samples.size(), total)) {
    if (flusher) flusher->flush(stream);  // outside the timed pair
    const double t = time_batch(stream, work, 1, start, stop);
    samples.push_back(t);
    total += t;
  }
  Window w{compute_stats(samples), std::nullopt, std::nullopt, std::nullopt};
  if (sampler) w.power = sampler->stop();
  detail::finish_window(w, options);
  return w;
}

// An NVML limitation is said once per process, not once per benchmark.
void say_once(const std::string& note) {
  static std::mutex mutex;
  static std::set<std::string> said;
  const std::lock_guard lock(mutex);
  if (said.insert(note).second) std::fprintf(stderr, "tcbench: NVML: %s.\n", note.c_str());
}

void report_power(benchmark::State& state, const Window& w) {
  if (!w.power) return;
  for (const std::string& note : w.power->notes) say_once(note);
  for (const auto& [counter, value] : power_counters(*w.power, w.seconds.median))
    set_counter(state, counter, value);
}

// A burst or sustained window's own counters.
void report_regime(benchmark::State& state, const RegimeReport& r) {
  set_counter(state, counters::idle_s, r.idle.seconds);
  set_counter(state, counters::window_s, r.window_s);
  if (r.regime != Regime::sustained) return;
  set_counter(state, counters::settle_s, r.settle_s);
  set_counter(state, counters::steady, r.steady ? 1.0 : 0.0);
  const Trace& t = r.trace;
  if (!(t.seconds > 0)) return;
  set_counter(state, counters::trace_s, t.seconds);
  set_counter(state, counters::curve_points, static_cast<double>(t.clock_mhz.size()));
  for (std::size_t i = 0; i < t.clock_mhz.size(); ++i) {
    const int point = static_cast<int>(i);
    if (t.clock_mhz[i]) set_counter(state, counters::clock_at(point), *t.clock_mhz[i]);
    if (t.power_w[i]) set_counter(state, counters::power_at(point), *t.power_w[i]);
  }
}

// A counter this benchmark already holds (measure() wrote the power ones), if any.
std::optional<double> counter_value(const benchmark::State& state, const Counter& counter) {
  const auto it = state.counters.find(counter.name());
  if (it == state.counters.end()) return std::nullopt;
  return it->second.value;
}

}  // namespace

namespace detail {
void set_current_call(const std::string& name, benchmark::IterationCount max_iterations) {
  g_call = {name, max_iterations};
}
}  // namespace detail

SampleStats sample_work(const Env& env, const std::function<void(cudaStream_t)>& work,
                        MeasureOptions options) {
  return sample_window(env, work, options).seconds;
}

namespace detail {
void finish_window(Window& window, const MeasureOptions& options) {
  if (options.read_after) window.read_after = options.read_after();
}

Window measure_window(const std::function<Window()>& sample) {
  if (g_last && g_last->name == g_call.name && g_call.max_iterations > g_last->max_iterations) {
    g_last->max_iterations = g_call.max_iterations;
    return g_last->window;  // this call continues the sizing of the one that measured
  }
  Window w = sample();
  g_last = LastWindow{g_call.name, g_call.max_iterations, w};
  return w;
}
}  // namespace detail

SampleStats measure(benchmark::State& state, const Env& env,
                    const std::function<void(cudaStream_t)>& work, MeasureOptions options) {
  return measure_window(state, env, work, std::move(options)).seconds;
}

std::string with_regime(std::string label, const std::optional<RegimeReport>& regime) {
  if (!regime || regime->sentence.empty()) return label;
  return label.empty() ? regime->sentence : label + "; " + regime->sentence;
}

Window measure_window(benchmark::State& state, const Env& env,
                      const std::function<void(cudaStream_t)>& work, MeasureOptions options) {
  const Window w = detail::measure_window([&] { return sample_window(env, work, options); });
  const SampleStats& stats = w.seconds;
  report_precomputed(state, stats.median);
  report_power(state, w);
  if (w.regime) report_regime(state, *w.regime);

  set_counter(state, counters::samples, static_cast<double>(stats.count));
  set_counter(state, counters::time_median_us, stats.median * 1e6);
  set_counter(state, counters::time_p10_us, stats.p10 * 1e6);
  set_counter(state, counters::time_p90_us, stats.p90 * 1e6);
  // A spread from fewer than 10 samples says nothing; the policy guarantees 10, this keeps it so.
  if (stats.count >= 10) set_counter(state, counters::spread_pct, 100.0 * stats.rel_spread());
  return w;
}

void report_precomputed(benchmark::State& state, double seconds) {
  for (auto _ : state) state.SetIterationTime(seconds);
}

void set_counter(benchmark::State& state, const Counter& counter, double value) {
  state.counters[counter.name()] = value;
}

std::optional<double> pct_of_peak(double achieved, double peak) {
  if (!(peak > 0) || !std::isfinite(achieved)) return std::nullopt;
  return 100.0 * achieved / peak;
}

void report_compute(benchmark::State& state, const Env& env, Precision p, double ops,
                    const SampleStats& seconds) {
  if (seconds.count == 0 || !(seconds.median > 0)) return;
  const double rate = ops / seconds.median * 1e-12;
  set_counter(state, counters::rate(p), rate);
  const Peak peak = env.device().peak(p);
  if (peak.supported)
    if (auto pct = pct_of_peak(rate, peak.denominator()))
      set_counter(state, counters::pct_of_peak, *pct);
  // By energy and by silicon: from the power and clock measure() read while timing.
  for (const auto& [counter, value] :
       efficiency_counters(env.gpu(), p, rate, counter_value(state, counters::power_w),
                           counter_value(state, counters::sm_clock_mhz)))
    set_counter(state, counter, value);
}

std::vector<std::pair<Counter, double>> power_counters(const PowerSummary& p,
                                                       double median_seconds) {
  std::vector<std::pair<Counter, double>> out;
  if (p.sm_clock_mhz) out.emplace_back(counters::sm_clock_mhz, *p.sm_clock_mhz);
  if (p.power_w) {
    out.emplace_back(counters::power_w, *p.power_w);
    if (median_seconds > 0) out.emplace_back(counters::energy_j, *p.power_w * median_seconds);
  }
  if (p.temp_c_max) out.emplace_back(counters::temp_c_max, *p.temp_c_max);
  if (p.throttle) out.emplace_back(counters::throttle, static_cast<double>(*p.throttle));
  return out;
}

std::vector<std::pair<Counter, double>> efficiency_counters(const GpuSpec& gpu, Precision p,
                                                            double rate,
                                                            std::optional<double> watts,
                                                            std::optional<double> sm_clock_mhz) {
  std::vector<std::pair<Counter, double>> out;
  if (watts && *watts > 0 && std::isfinite(rate))
    out.emplace_back(counters::rate_per_w(p), rate / *watts);
  if (sm_clock_mhz)
    if (auto pct = pct_of_peak(rate, peak_at_clock(gpu, p, *sm_clock_mhz)))
      out.emplace_back(counters::pct_of_peak_at_clock, *pct);
  return out;
}

void report_bandwidth(benchmark::State& state, const Env& env, double bytes,
                      const SampleStats& seconds) {
  if (seconds.count == 0 || !(seconds.median > 0)) return;
  const double gbps = bytes / seconds.median * 1e-9;
  set_counter(state, counters::gbps, gbps);
  if (auto pct = pct_of_peak(gbps, env.device().peak_gbps()))
    set_counter(state, counters::pct_of_peak, *pct);
  if (const auto watts = counter_value(state, counters::power_w); watts && *watts > 0)
    set_counter(state, counters::gbps_per_w, gbps / *watts);
}

}  // namespace tcbench::bench
