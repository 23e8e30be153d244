// Hardware counters around a piece of GPU work, read in-process with CUPTI's Range Profiler
// (cupti_range_profiler.h, CUDA 12.6+; compute capability 7.5+).
//
// collect_counters: one user range holding `runs` executions of the work, replayed by tcbench
// once per pass the metric configuration needs (user replay: the work must give the same
// answer when run again, as a GEMM does).
// collect_range_counters: several named, nested user ranges in ONE session (a RangePlan, e.g. a
// training step and its four phases inside it), every range getting the whole metric set. One
// session rather than one per range: the work runs plan.passes() times instead of once per pass
// per range, and every range of a pass sees the same execution (the step's range holds exactly
// its phases' kernels). The work pushes and pops the plan's ranges itself, through RangeMarks,
// and must push the same ranges in the same order on every replay (checked: a pass that
// deviates is an Error naming the range).
// Every CUPTI object lives in an RAII owner, so an exception from the work (a failed launch, a
// failed kernel) pops the open ranges, stops, disables and de-initializes the profiler on its way
// out: the next collection starts clean.
#pragma once

#include "tcbench/profiling/availability.hpp"
#include "tcbench/profiling/range_plan.hpp"

#include <cstddef>
#include <functional>
#include <optional>
#include <span>
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

// What the work of collect_range_counters marks its ranges with. push() and pop() synchronize the
// device first, so a range holds exactly the work enqueued between them (the waits are idle
// cycles, which the active-cycle metrics leave out). Both throw Error when the pass departs
// from the plan (another name or level than the plan's next range, a pop with nothing open).
class RangeMarks {
 public:
  virtual void push(std::string_view name) = 0;
  virtual void pop() = 0;

 protected:
  ~RangeMarks() = default;
};

// One range's values, named by its path ("step/forward").
struct RangeValues {
  std::string path;
  std::vector<CounterValue> values;  // in the metric table's order
  std::optional<double> value(std::string_view counter) const;
};

struct RangeCounters {
  std::string chip;
  std::size_t passes = 0;           // replays of the work CUPTI asked for
  std::vector<RangeValues> ranges;  // in the plan's order
  // The range with this path; throws Error when the plan had none.
  const RangeValues& at(std::string_view path) const;
};

// Collects the current device's metric table over every range of `ranges` in one session:
// `work` is run once per pass and must push and pop exactly `ranges`, in order, with the
// RangeMarks it is given. Throws CountersUnavailable (one sentence) where counters cannot be read
// here, as collect_counters does; InvalidArgument for a bad range list; Error when a pass
// departs from the plan, CUPTI asks for more passes than the plan, drops a range or evaluates a
// value that is not finite. Anything `work` throws propagates after the open ranges are popped
// and the profiler is shut down.
RangeCounters collect_range_counters(std::span<const RangeSpec> ranges,
                                     const std::function<void(RangeMarks&)>& work);

}  // namespace tcbench::profiling
