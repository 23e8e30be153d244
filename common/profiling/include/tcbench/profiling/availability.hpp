// Why hardware counters cannot be read here, as one sentence a user can act on.
//
// Counters are a bonus beside the throughput: a benchmark that cannot read them still measures
// and reports "counters skipped: <sentence>". Only environment problems are turned into
// CountersUnavailable; a CUPTI call that fails for any other reason is a bug and throws
// tcbench::Error like every other API check.
#pragma once

#include "tcbench/environment.hpp"
#include "tcbench/error.hpp"

#include <cupti_result.h>

#include <optional>
#include <string>
#include <string_view>

namespace tcbench::profiling {

class CountersUnavailable : public Error {
 public:
  using Error::Error;
};

// The sentence for a CUPTI status that means "not here, not now" (no permission, another
// profiler attached, a device configuration CUPTI cannot profile, unknown chip), else nullopt.
std::optional<std::string> unavailable_reason(CUptiResult status);

// Throws CountersUnavailable for the statuses above, else returns `status` unchanged, so that
// TCB_CUPTI(available(cuptiX(&params))) both classifies and names the failing call.
CUptiResult available(CUptiResult status);

// The environment variable that turns in-process counters off (`tcbench profile` sets it so
// that ncu, not tcbench, owns the counters). nullopt when collection is allowed.
inline constexpr std::string_view kCountersEnv = environment::kCounters;
std::optional<std::string> disabled_by_environment();

// The sentence for a chip the metric table does not know.
std::string unknown_chip_reason(std::string_view chip);

}  // namespace tcbench::profiling
