#include "tcbench/bench/measure.hpp"

#include "tcbench/cuda_owners.hpp"

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
// The samples of the last sizing call (one iteration), for the call that follows it.
struct SizingSamples {
  std::string name;
  SampleStats stats;
};
std::optional<SizingSamples> g_sizing;

}  // namespace

namespace detail {
void set_current_call(const std::string& name, benchmark::IterationCount max_iterations) {
  g_call = {name, max_iterations};
}
}  // namespace detail

SampleStats sample_work(const Env& env, const std::function<void(cudaStream_t)>& work,
                        MeasureOptions options) {
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

  std::vector<double> samples;
  double total = 0.0;
  L2Flusher* flusher = options.flush_l2 ? &env.flusher() : nullptr;
  while (!policy.done(samples.size(), total)) {
    if (flusher) flusher->flush(stream);  // outside the timed pair
    const double t = time_batch(stream, work, 1, start, stop);
    samples.push_back(t);
    total += t;
  }
  return compute_stats(samples);
}

SampleStats measure(benchmark::State& state, const Env& env,
                    const std::function<void(cudaStream_t)>& work, MeasureOptions options) {
  SampleStats stats;
  if (g_sizing && g_sizing->name == g_call.name && g_call.max_iterations > 1) {
    stats = g_sizing->stats;  // the sizing call just measured this very configuration
  } else {
    stats = sample_work(env, work, options);
  }
  g_sizing.reset();
  if (g_call.max_iterations == 1) g_sizing = SizingSamples{g_call.name, stats};
  report_precomputed(state, stats.median);

  set_counter(state, counters::samples, static_cast<double>(stats.count));
  set_counter(state, counters::time_median_us, stats.median * 1e6);
  set_counter(state, counters::time_p10_us, stats.p10 * 1e6);
  set_counter(state, counters::time_p90_us, stats.p90 * 1e6);
  // A spread from fewer than 10 samples says nothing; the policy guarantees 10, this keeps it so.
  if (stats.count >= 10) set_counter(state, counters::spread_pct, 100.0 * stats.rel_spread());
  return stats;
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
}

void report_bandwidth(benchmark::State& state, const Env& env, double bytes,
                      const SampleStats& seconds) {
  if (seconds.count == 0 || !(seconds.median > 0)) return;
  const double gbps = bytes / seconds.median * 1e-9;
  set_counter(state, counters::gbps, gbps);
  if (auto pct = pct_of_peak(gbps, env.device().peak_gbps()))
    set_counter(state, counters::pct_of_peak, *pct);
}

}  // namespace tcbench::bench
