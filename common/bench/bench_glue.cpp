#include "tcbench/bench.hpp"

#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>

namespace tcbench::bench {
namespace {
std::atomic<int> g_errors{0};
}

int error_count() {
  return g_errors.load();
}

VerifyStats verify_once(const std::string& key, const std::function<VerifyStats()>& check) {
  static std::mutex mutex;
  static std::map<std::string, VerifyStats> done;
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = done.find(key); it != done.end()) return it->second;
  }
  const VerifyStats stats = check();
  const std::lock_guard<std::mutex> lock(mutex);
  done.emplace(key, stats);
  return stats;
}

benchmark::internal::Benchmark* register_gpu_benchmark(
    const std::string& name, std::function<void(benchmark::State&)> body) {
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [body, name](benchmark::State& state) {
    try {
      body(state);
    } catch (const Skipped& e) {
      state.SkipWithError((std::string("skipped: ") + e.what()).c_str());
    } catch (const std::exception& e) {
      ++g_errors;
      std::fprintf(stderr, "tcbench: %s failed: %s\n", name.c_str(), e.what());
      state.SkipWithError((std::string("error: ") + e.what()).c_str());
    }
  });
  // Without UseManualTime, rates would divide by CPU time, which for asynchronous GPU work is
  // meaningless.
  b->UseManualTime()->Unit(benchmark::kMillisecond);
  return b;
}

std::string gemm_name(std::string_view topic, std::string_view variant, Precision p, std::int64_t m,
                      std::int64_t n, std::int64_t k) {
  std::string s;
  s.append(topic).append("/").append(variant).append("/").append(name(p));
  s.append("/m:").append(std::to_string(m));
  s.append("/n:").append(std::to_string(n));
  s.append("/k:").append(std::to_string(k));
  return s;
}

void require_memory(const DeviceInfo& dev, std::size_t bytes, std::string_view what) {
  const std::size_t free_bytes = dev.free_mem_bytes();
  if (static_cast<double>(bytes) > 0.9 * static_cast<double>(free_bytes)) {
    char buf[256];
    std::snprintf(buf, sizeof buf, "%.*s needs %.2f GiB but only %.2f GiB of %s is free",
                  static_cast<int>(what.size()), what.data(),
                  static_cast<double>(bytes) / (1 << 30),
                  static_cast<double>(free_bytes) / (1 << 30), dev.spec.name.c_str());
    throw Skipped(buf);
  }
}

SampleStats time_loop(benchmark::State& state, cudaStream_t stream, L2Flusher* flusher,
                      const TimingOptions& options, const std::function<void(cudaStream_t)>& work) {
  for (int i = 0; i < options.warmup; ++i) work(stream);
  TCB_CUDA(cudaStreamSynchronize(stream));
  GpuTimer timer;
  std::vector<double> samples;
  for (auto _ : state) {
    if (flusher && options.flush_l2) flusher->flush(stream);
    const double seconds = timer.time(stream, work);
    state.SetIterationTime(seconds);
    samples.push_back(seconds);
  }
  return compute_stats(samples);
}

void report_compute(benchmark::State& state, const DeviceInfo& dev, Precision p, double ops,
                    const SampleStats& seconds) {
  if (seconds.count == 0 || seconds.median <= 0) return;
  const double rate = ops / seconds.median * 1e-12;
  state.counters[is_integer(p) ? "tops" : "tflops"] = rate;
  const Peak peak = dev.peak(p);
  if (peak.supported && peak.denominator() > 0)
    state.counters["pct_of_peak"] = 100.0 * rate / peak.denominator();
  state.counters["time_median_us"] = seconds.median * 1e6;
  state.counters["time_p10_us"] = seconds.p10 * 1e6;
  state.counters["time_p90_us"] = seconds.p90 * 1e6;
  state.counters["spread_pct"] = 100.0 * seconds.rel_spread();
}

void report_bandwidth(benchmark::State& state, const DeviceInfo& dev, double bytes,
                      const SampleStats& seconds) {
  if (seconds.count == 0 || seconds.median <= 0) return;
  const double gbps = bytes / seconds.median * 1e-9;
  state.counters["gbps"] = gbps;
  if (dev.peak_gbps() > 0) state.counters["pct_of_peak_bw"] = 100.0 * gbps / dev.peak_gbps();
}

}  // namespace tcbench::bench
