// The CUPTI range plan of bench_tensor_util's train_step rows: the whole step at level 1 and
// each phase nested in it at level 2, in the order GpuTrainer::step tells them (one session of
// 5 ranges on 2 nesting levels, profiling/range_plan.hpp). tests/host/profiling/test_range_plan.cpp
// checks this very plan against CUPTI's host API per chip.
#pragma once

#include "tcbench/profiling/range_plan.hpp"
#include "tcbench/studies/training_step_phases.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace tcbench::bench {

inline constexpr std::string_view kStepRange = "step";

inline std::vector<profiling::RangeSpec> step_ranges() {
  std::vector<profiling::RangeSpec> out{{std::string(kStepRange), 1}};
  for (studies::StepPhase p : studies::kStepPhases) out.push_back({std::string(name(p)), 2});
  return out;
}

// "step/forward": the decoded path of a phase's range.
inline std::string phase_range_path(studies::StepPhase p) {
  return std::string(kStepRange) + std::string(profiling::kRangeDelimiter) + std::string(name(p));
}

}  // namespace tcbench::bench
