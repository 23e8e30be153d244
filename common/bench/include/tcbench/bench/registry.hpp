// Registering GPU benchmarks with Google Benchmark, and what a body may throw.
#pragma once

#include "tcbench/bench/env.hpp"
#include "tcbench/error.hpp"
#include "tcbench/precision.hpp"

#include <benchmark/benchmark.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace tcbench::bench {

// Thrown when a configuration cannot run here (precision the GPU lacks, size that does not fit,
// no cuBLASLt algorithm). Reported as an error whose message starts with "skipped: ", which the
// tools list as a skip.
class Skipped : public Error {
 public:
  using Error::Error;
};

// Registers `body` under `name`. The harness owns the iteration: a body runs once per
// repetition (Iterations(1)) and takes its own samples through measure(), which reports the
// median as the iteration's manual time. Exceptions from `body` become SkipWithError:
// "skipped: <reason>" for Skipped (and NoAlgorithm), "error: <what>" for anything else (these make
// the binary exit 1 at the end, after the other benchmarks have run). After an error that leaves
// the CUDA context unusable (an illegal address, say), it is reported once and every later
// benchmark is skipped with that reason instead of failing again.
benchmark::internal::Benchmark* register_gpu_benchmark(const Env& env, const std::string& name,
                                                       std::function<void(benchmark::State&)> body);

// "fp16_vs_fp32/cublaslt/fp16/m:4096/n:4096/k:4096"
std::string gemm_name(std::string_view topic, std::string_view variant, Precision p, std::int64_t m,
                      std::int64_t n, std::int64_t k);

// Throws Skipped unless `bytes` fit in the device's free memory with 10% headroom.
void require_memory(const Env& env, std::size_t bytes, std::string_view what);

// Number of benchmarks that ended in a real error (not a skip) so far.
int error_count();

}  // namespace tcbench::bench
