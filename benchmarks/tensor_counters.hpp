// Tensor-pipe counters beside a benchmark's throughput (bench_tensor_util, bench_tensor_peak).
//
// After a configuration has been timed, its work runs again inside one CUPTI range (replayed once
// per pass the chip's metric set needs; common/profiling) and each metric becomes a counter:
// tensor_active_pct, the chip's sub-pipes, sm_throughput_pct, dram_throughput_pct, plus
// profile_passes. Counters are read once per configuration and process, and so is a failure.
// Whatever goes wrong, the row keeps the timing, TFLOP/s and % of peak measured before:
//   - counters that cannot be read here (no permission, ncu attached, unknown chip: the
//     profiler's CountersUnavailable): the label says "counters skipped: <why>", and stderr says
//     it once per process;
//   - any other profiler error (a CUPTI call failing with a status availability.cpp does not
//     map, a replay pass that departs from the plan, dropped ranges, a non-finite value): the
//     row gets counters_error = 1 and the label "counters error: <CUPTI status> from <call>"
//     (or the check that failed), and the binary exits 1 at the end (registry.hpp's
//     record_failure): a defect to fix, never a lost measurement.
#pragma once

#include "tcbench/bench/harness.hpp"
#include "tcbench/profiling/range_profiler.hpp"

#include <cstdio>
#include <functional>
#include <optional>
#include <string>
#include <utility>

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

// The called function of a TCB_CUPTI expression: "available(cuptiProfilerInitialize(&p))" ->
// "cuptiProfilerInitialize".
inline std::string called_function(const std::string& call) {
  const std::size_t at = call.find("cupti");
  const std::string from = at == std::string::npos ? call : call.substr(at);
  return from.substr(0, from.find('('));
}

// What reading one configuration's counters came to, kept for every later call of it.
template <typename Values>
struct CounterOutcome {
  std::optional<Values> values;
  std::string note;  // for the label: "counters skipped: ..." or "counters error: ..."
  bool error = false;
};

// Runs `read` (which returns the counters) once per `key` and process, and classifies what goes
// wrong (see the top of this file). A failure is recorded (record_failure) the first time only.
template <typename Values, typename Read>
const CounterOutcome<Values>& read_counters_once(const std::string& key, Read&& read) {
  return once<CounterOutcome<Values>>("tensor_counters|" + key, [&] {
    CounterOutcome<Values> out;
    try {
      out.values = read();
    } catch (const profiling::CountersUnavailable& e) {
      out.note = "counters skipped: " + counters_skipped(e);
    } catch (const ApiError& e) {
      out.error = true;
      out.note = "counters error: " + e.status() + " from " + called_function(e.call());
      record_failure(key, "its CUPTI counters: " + std::string(e.what()));
    } catch (const std::exception& e) {
      out.error = true;
      std::string what = e.what();
      if (what.size() > 200) what = what.substr(0, 197) + "...";
      out.note = "counters error: " + what;
      record_failure(key, "its CUPTI counters: " + std::string(e.what()));
    }
    return out;
  });
}

// Sets counters_error on a row whose counters failed; returns the label note (nullopt: read).
template <typename Values>
std::optional<std::string> note_of(benchmark::State& state, const CounterOutcome<Values>& o) {
  if (o.values) return std::nullopt;
  if (o.error) set_counter(state, tcbench::counters::counters_error, 1.0);
  return o.note;
}

// How add_tensor_counters reads counters: profiling::collect_counters, or a stand-in in tests.
using CollectCounters = std::function<profiling::Counters(const std::function<void()>&, int)>;

// Collects (or recalls) the counters of `key` and sets them on `state`. Returns the label note
// when counters could not be read ("counters skipped: ..." or "counters error: ...").
inline std::optional<std::string> add_tensor_counters(
    benchmark::State& state, const Env& env, const std::string& key,
    const std::function<void(cudaStream_t)>& run_once, int runs = kProfiledRuns,
    const CollectCounters& collect = profiling::collect_counters) {
  const auto& got = read_counters_once<profiling::Counters>(
      key, [&] { return collect([&] { run_once(env.stream()); }, runs); });
  if (!got.values) return note_of(state, got);
  for (const profiling::CounterValue& v : got.values->values)
    set_counter(state, counter_for_metric(v.counter), v.value);
  set_counter(state, tcbench::counters::profile_passes, static_cast<double>(got.values->passes));
  return std::nullopt;
}

// "<label>; <note>" (or the label alone).
inline std::string with_counter_note(const std::string& label,
                                     const std::optional<std::string>& note) {
  if (!note) return label;
  return (label.empty() ? "" : label + "; ") + *note;
}

}  // namespace tcbench::bench
