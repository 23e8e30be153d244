// Tensor-pipe counters beside a benchmark's throughput (bench_tensor_util, bench_tensor_peak).
//
// After a configuration has been timed, its work runs again inside one CUPTI range (replayed once
// per pass the chip's metric set needs; common/profiling) and each metric becomes a counter:
// tensor_active_pct, the chip's sub-pipes, sm_throughput_pct, dram_throughput_pct, plus
// profile_passes. Counters are read once per configuration and process. When they cannot be
// read here (no permission, ncu attached, unknown chip), the throughput stands, the label says
// "counters skipped: <why>", and stderr says it once per process.
#pragma once

#include "tcbench/bench/harness.hpp"
#include "tcbench/profiling/range_profiler.hpp"

#include <cstdio>
#include <functional>
#include <optional>
#include <string>

namespace tcbench::bench {

// The schema's counter for a metric table counter name (common/profiling/src/metric_table.cpp
// names its counters from the schema, so this always finds one).
inline Counter counter_for_metric(const std::string& name) {
  for (const CounterDef* d : all_counter_defs())
    if (d->name == name) return *d;
  throw Error("the CUPTI metric table names counter '" + name + "', which the schema lacks");
}

// Executions of the work inside the range: enough that a short kernel's launch gaps do not
// dominate the "active" cycles, few enough that 5-9 replay passes stay cheap.
inline constexpr int kProfiledRuns = 3;

// Says on stderr, once per process, why counters are skipped; returns the reason for the label.
inline std::string counters_skipped(const profiling::CountersUnavailable& e) {
  static bool told = false;
  if (!told) std::fprintf(stderr, "tcbench: counters skipped: %s.\n", e.what());
  told = true;
  return std::string(e.what());
}

// Collects (or recalls) the counters of `key` and sets them on `state`. Returns the reason when
// counters could not be read, for the label.
inline std::optional<std::string> add_tensor_counters(
    benchmark::State& state, const Env& env, const std::string& key,
    const std::function<void(cudaStream_t)>& run_once, int runs = kProfiledRuns) {
  profiling::Counters counters;
  try {
    counters = once<profiling::Counters>("tensor_counters|" + key, [&] {
      return profiling::collect_counters([&] { run_once(env.stream()); }, runs);
    });
  } catch (const profiling::CountersUnavailable& e) {
    return counters_skipped(e);
  }
  for (const profiling::CounterValue& v : counters.values)
    set_counter(state, counter_for_metric(v.counter), v.value);
  set_counter(state, tcbench::counters::profile_passes, static_cast<double>(counters.passes));
  return std::nullopt;
}

// "<label>; counters skipped: <why>" (or the label alone).
inline std::string with_counter_note(const std::string& label,
                                     const std::optional<std::string>& skipped) {
  if (!skipped) return label;
  return (label.empty() ? "" : label + "; ") + "counters skipped: " + *skipped;
}

}  // namespace tcbench::bench
