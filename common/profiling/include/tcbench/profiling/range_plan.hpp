// Which user ranges one CUPTI session collects, and what that costs, decided on the host.
//
// A plan is a list of named ranges in push order, each with its nesting level (1 = outermost),
// the chip's metric set (metric_table.hpp) and its configuration image. CUPTI collects one
// nesting level per replay pass, so the work is replayed config_passes x nesting_levels times
// (CUPTI's nested_range_profiling sample: a metric needing 2 passes needs 4 with one nested
// level). A whole training step with its four phases nested inside is 5 ranges on 2 levels.
// Everything here runs without a GPU (the profiler host API), so the plan is tested per chip on
// any build machine (tests/host/profiling/test_range_plan.cpp).
#pragma once

#include "tcbench/profiling/metric_table.hpp"
#include "tcbench/profiling/profiler_host.hpp"

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcbench::profiling {

struct RangeSpec {
  std::string name;  // letters, digits, '_', '-' (no delimiter)
  int level = 1;     // 1: outermost; a range is nested in the last range pushed one level up
};

// How CUPTI joins a nested range's name to its parents' when it decodes ("step/forward").
inline constexpr std::string_view kRangeDelimiter = "/";

struct RangePlan {
  std::string chip;
  std::vector<RangeSpec> ranges;   // push order
  std::vector<std::string> paths;  // each range's name with its parents', as decoded
  std::vector<Metric> metrics;     // the chip's metric table, every range gets all of them
  std::vector<std::uint8_t> config_image;
  std::size_t config_passes = 0;  // passes CUPTI needs for the metric set at one level
  int nesting_levels = 1;

  // Replays of the work (every range each time) until every level has every pass.
  std::size_t passes() const { return config_passes * static_cast<std::size_t>(nesting_levels); }
  std::vector<std::string> metric_names() const;
};

// The range tree nodes a counter data image is sized for: twice the plan's ranges, as NVIDIA's
// Nsight Perf SDK sizes nested range trees (CounterDataImageOptions: 2 x maxNumRanges). The
// exact count left no slack for a tree CUPTI builds with one more node than tcbench counts.
inline std::uint32_t range_tree_nodes(std::size_t ranges) {
  return static_cast<std::uint32_t>(2 * ranges);
}

// The decoded names of `ranges`. Throws InvalidArgument, naming the range, for no ranges, an
// empty name or one with the delimiter or other characters, a first level other than 1, a level
// more than one below the previous range's, or two ranges with the same path.
std::vector<std::string> range_paths(std::span<const RangeSpec> ranges);

// The plan for `ranges` on `host`'s chip with the chip's metric table. Throws
// CountersUnavailable for a chip the table does not know and InvalidArgument for bad ranges.
RangePlan plan_ranges(ProfilerHost& host, std::span<const RangeSpec> ranges);

}  // namespace tcbench::profiling
