// Registering GPU benchmarks with Google Benchmark, and what a body may throw.
#pragma once

#include "tcbench/bench/env.hpp"
#include "tcbench/bench/name_filter.hpp"
#include "tcbench/error.hpp"

#include <benchmark/benchmark.h>

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcbench::bench {

// Registers `body` under `name` (built with BenchName). The harness owns the sampling: a body
// takes its own samples through measure(), which reports the median as every iteration's manual
// time (Google Benchmark's sizing calls and the real call share one measurement per repetition,
// see measure.hpp). Exceptions from `body` become SkipWithError:
// "skipped: <reason>" for Skipped (and NoAlgorithm), "error: <what>" for anything else (these make
// the binary exit 1 at the end, after the other benchmarks have run). After an error that leaves
// the CUDA context unusable (an illegal address, say), it is reported once and every later
// benchmark is skipped with that reason instead of failing again.
// Only a name --benchmark_filter matches is registered (name_filter.hpp: tcbench matches the
// filter itself, in linear time; Google Benchmark never sees it); for any other name this returns
// nullptr and `body` never runs. `name` must be one BenchName builds (BenchName::parse; throws
// InvalidArgument otherwise): its parts become the row's tcbench_args (registered_args).
benchmark::internal::Benchmark* register_gpu_benchmark(const std::string& name,
                                                       std::function<void(benchmark::State&)> body);

// The filter register_gpu_benchmark applies (the shared main sets it from the command line before
// any topic registers), and how many benchmarks it let through so far.
void set_name_filter(NameFilter filter);
int registered_count();
// Their names (without "/manual_time"), in registration order: what a run will execute (the row
// file's first line lists them, so a reader of a cut run can name the rows that never ran).
const std::vector<std::string>& registered_names();
// The typed arguments of a registered name (BenchName::args_json()), or nullopt for a name that
// was not registered here: what the reporters write as each row's tcbench_args.
std::optional<std::string> registered_args(const std::string& name);

// Throws Skipped unless `bytes` fit in the device's free memory with 10% headroom.
void require_memory(const Env& env, std::size_t bytes, std::string_view what);

// Number of benchmarks that ended in a real error (not a skip) so far.
int error_count();

// Counts a failure of benchmark `name` that its row survives (its timing stands, a counter and
// its label say what failed; tensor_counters.hpp's CUPTI errors): said on stderr, and the
// binary exits 1 at the end, as for a benchmark error. Also checks whether the CUDA context is
// still usable (see register_gpu_benchmark).
void record_failure(const std::string& name, const std::string& what);

}  // namespace tcbench::bench
