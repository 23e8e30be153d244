// Hardware counters around a piece of GPU work, read in-process with CUPTI's Range Profiler
// (cupti_range_profiler.h, CUDA 12.6+; compute capability 7.5+).
//
// One collection = one user range holding `runs` executions of the work, replayed by tcbench
// once per pass the metric configuration needs (user replay: the work must give the same
// answer when run again, as a GEMM does). Every CUPTI object lives in an RAII owner, so an
// exception from the work (a failed launch, a failed kernel) pops the range, stops, disables and
// de-initializes the profiler on its way out: the next collection starts clean.
#pragma once

#include "tcbench/profiling/availability.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tcbench::profiling {

struct CounterValue {
  std::string counter;  // Google Benchmark counter name, e.g. "tensor_active_pct"
  std::string metric;   // the CUPTI/ncu metric it was read from
  double value = 0;
};

struct Counters {
  std::string chip;                  // CUPTI's chip name, e.g. "GH100"
  std::size_t passes = 0;            // how many times the runs were replayed
  int runs = 0;                      // executions of the work inside the range, per pass
  std::vector<CounterValue> values;  // in the metric table's order

  std::optional<double> value(std::string_view counter) const;
};

// CUPTI's chip name of the current device ("GH100"), the key of the metric table.
std::string current_device_chip();

// Collects the metric table of the current device's chip around `runs` executions of `work`
// (which enqueues GPU work and returns; the device is synchronized after each pass).
// Throws CountersUnavailable, whose what() is one sentence, when counters cannot be read here:
// no permission, another profiler attached, unknown chip, TCBENCH_COUNTERS=off, a device CUPTI
// cannot profile. Anything `work` throws propagates after the profiler has been shut down.
Counters collect_counters(const std::function<void()>& work, int runs);

}  // namespace tcbench::profiling
