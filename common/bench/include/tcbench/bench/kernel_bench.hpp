// The non-GEMM kernel helper (llm.c's validate_result + benchmark_kernel): a topic states what
// one run moves and does, and how to check one run; the helper checks once per process, times
// through measure() and reports gbps and pct_of_peak (DRAM) and the label.
#pragma once

#include "tcbench/bench/env.hpp"
#include "tcbench/bench/measure.hpp"

#include <benchmark/benchmark.h>

#include <functional>
#include <optional>
#include <string>

namespace tcbench::bench {

struct KernelCase {
  // Bytes one run of `work` moves: every input read once and every output written once.
  double bytes_moved = 0;
  // Before the checked run: poison the outputs, zero accumulators (optional).
  std::function<void(cudaStream_t)> reset;
  // The timed work: one run.
  std::function<void(cudaStream_t)> work;
  // After reset + one run (stream synchronized): nullopt when the outputs are right, else one
  // sentence saying what differs ("amax is 0.5, the host's 0.99"). Required: nothing is timed
  // unchecked.
  std::function<std::optional<std::string>(cudaStream_t)> check;
  MeasureOptions options;
  std::string label = "bit-exact vs the host";
};

// Checks once per process under `key` (reset, work, synchronize, check; a failure throws Error
// with the check's sentence and is not cached), then measures `work` and reports bandwidth.
SampleStats run_kernel(benchmark::State& state, const Env& env, const std::string& key,
                       const KernelCase& kernel);

}  // namespace tcbench::bench
