// Google Benchmark glue shared by every benchmark binary.
//
// A topic file (benchmarks/bench_<topic>.cu) defines tcbench::bench::register_topic(env) and
// registers its benchmarks there; the shared main() (common/bench/bench_main.cpp) handles the
// device check (exit 77 without a GPU), --quick, the run context and the exit status.
#pragma once

#include "tcbench/device_info.hpp"
#include "tcbench/error.hpp"
#include "tcbench/precision.hpp"
#include "tcbench/timing.hpp"
#include "tcbench/verify.hpp"

#include <benchmark/benchmark.h>

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace tcbench::bench {

struct Env {
  const DeviceInfo& device;
  bool quick = false;  // --quick: a small fixed set of sizes, for CI smoke runs
};

// Defined once per benchmark binary, by its topic file.
void register_topic(const Env& env);

// Thrown when a configuration cannot run here (precision the GPU lacks, size that does not fit).
// Reported as an error whose message starts with "skipped: ", which the tools list as a skip.
class Skipped : public Error {
 public:
  using Error::Error;
};

// Registers `body` under `name` with manual (GPU event) timing. Exceptions from `body` become
// SkipWithError: "skipped: <reason>" for Skipped, "error: <what>" for anything else (these make
// the binary exit 1 at the end, after the other benchmarks have run).
benchmark::internal::Benchmark* register_gpu_benchmark(const std::string& name,
                                                       std::function<void(benchmark::State&)> body);

// "fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096"
std::string gemm_name(std::string_view topic, std::string_view variant, Precision p, std::int64_t m,
                      std::int64_t n, std::int64_t k);

// Throws Skipped unless `bytes` fit in the device's free memory with 10% headroom.
void require_memory(const DeviceInfo& dev, std::size_t bytes, std::string_view what);

// The timed loop: warm-up, then per iteration an optional L2 flush (not timed) and the work
// between two events; each sample becomes the iteration's manual time. Returns the samples'
// statistics, in seconds.
SampleStats time_loop(benchmark::State& state, cudaStream_t stream, L2Flusher* flusher,
                      const TimingOptions& options, const std::function<void(cudaStream_t)>& work);

// Counters for a compute-bound result: tflops (tops for integer precisions) computed from the
// problem's operation count and the MEDIAN sample, pct_of_peak against the device's peak for
// `p`, and the timing spread (time_median_us, time_p10_us, time_p90_us, spread_pct).
void report_compute(benchmark::State& state, const DeviceInfo& dev, Precision p, double ops,
                    const SampleStats& seconds);

// gbps from bytes moved per run and the median sample, with pct_of_peak vs DRAM bandwidth.
void report_bandwidth(benchmark::State& state, const DeviceInfo& dev, double bytes,
                      const SampleStats& seconds);

// Google Benchmark calls a benchmark function several times (to size the iteration count, and
// once per repetition). Inputs are deterministic, so the verification of `key` is done on the
// first call and its result reused after; a failed verification is not cached (it throws).
VerifyStats verify_once(const std::string& key, const std::function<VerifyStats()>& check);

// Number of benchmarks that ended in a real error (not a skip) so far.
int error_count();

}  // namespace tcbench::bench
