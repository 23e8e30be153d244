#include "tcbench/bench/registry.hpp"

#include "tcbench/bench/measure.hpp"
#include "tcbench/gemm_lt.hpp"

#include <atomic>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace tcbench::bench {
namespace {
std::atomic<int> g_errors{0};
NameFilter g_filter;  // --benchmark_filter (set by the shared main before registration)
std::vector<std::string> g_registered;      // benchmarks registered under it, in order
std::map<std::string, std::string> g_args;  // name -> its tcbench_args
std::mutex g_fatal_mutex;
std::optional<std::string> g_fatal;  // set once the CUDA context is unusable

// After a failure, is the context still usable? A sticky error (illegal address, launch failure,
// ...) makes every later CUDA call fail with the same status.
void note_if_context_lost(const std::string& name) {
  const cudaError_t status = cudaDeviceSynchronize();
  if (status == cudaSuccess || !is_sticky_cuda_error(status)) {
    (void)cudaGetLastError();  // a non-sticky error must not leak into the next benchmark
    return;
  }
  const std::lock_guard<std::mutex> lock(g_fatal_mutex);
  if (!g_fatal)
    g_fatal = std::string("an earlier benchmark (") + name + ") left the GPU context unusable (" +
              status_name(status) + ")";
}
}  // namespace

int error_count() {
  return g_errors.load();
}

void record_failure(const std::string& name, const std::string& what) {
  ++g_errors;
  std::fprintf(stderr, "tcbench: %s failed: %s\n", name.c_str(), what.c_str());
  note_if_context_lost(name);
  const std::lock_guard<std::mutex> lock(g_fatal_mutex);
  if (g_fatal)
    std::fprintf(stderr, "tcbench: %s; the remaining benchmarks are skipped.\n", g_fatal->c_str());
}

void set_name_filter(NameFilter filter) {
  g_filter = std::move(filter);
}

int registered_count() {
  return static_cast<int>(g_registered.size());
}

const std::vector<std::string>& registered_names() {
  return g_registered;
}

std::optional<std::string> registered_args(const std::string& name) {
  const auto it = g_args.find(name);
  if (it == g_args.end()) return std::nullopt;
  return it->second;
}

benchmark::internal::Benchmark* register_gpu_benchmark(
    const std::string& name, std::function<void(benchmark::State&)> body) {
  // The name Google Benchmark reports, and would have matched its filter against.
  const std::optional<BenchName> parsed = BenchName::parse(name);
  if (!parsed || parsed->str() != name)
    throw InvalidArgument("benchmark name '" + name +
                          "' is not one BenchName builds (topic/variant/precision[/key:value]...)");
  if (!g_filter.matches(name + "/manual_time")) return nullptr;
  g_registered.push_back(name);
  g_args[name] = parsed->args_json();
  auto* b = benchmark::RegisterBenchmark(name.c_str(), [body, name](benchmark::State& state) {
    bench::detail::set_current_call(name, state.max_iterations);
    {
      const std::lock_guard<std::mutex> lock(g_fatal_mutex);
      if (g_fatal) {
        state.SkipWithError(("skipped: not run: " + *g_fatal).c_str());
        return;
      }
    }
    try {
      body(state);
    } catch (const Skipped& e) {
      state.SkipWithError((std::string("skipped: ") + e.what()).c_str());
    } catch (const NoAlgorithm& e) {
      state.SkipWithError((std::string("skipped: ") + e.what()).c_str());
    } catch (const std::exception& e) {
      state.SkipWithError((std::string("error: ") + e.what()).c_str());
      record_failure(name, e.what());
    }
  });
  // The harness owns the sampling (measure()); every Google Benchmark iteration reports the
  // median of its samples as manual time. Without UseManualTime, rates would divide by CPU time,
  // which for asynchronous GPU work is meaningless. (Iterations(1) would avoid Google
  // Benchmark's sizing calls, but it appends "/iterations:1" to every name; measure() instead
  // reuses the first call's window for every later sizing call of the same repetition.)
  b->UseManualTime()->Unit(benchmark::kMillisecond);
  return b;
}

void require_memory(const Env& env, std::size_t bytes, std::string_view what) {
  const DeviceInfo& dev = env.device();
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

}  // namespace tcbench::bench
