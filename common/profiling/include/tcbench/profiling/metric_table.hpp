// Which hardware metrics tcbench reads on which chip, and the counter each is reported as.
//
// The headline is sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active: the share of
// the cycles an SM was active in which its tensor pipe was busy (Nsight Compute's "tensor pipe
// utilization"). Every chip tcbench claims has it. The per-operation sub-pipes differ by
// architecture (names enumerated with the CUPTI 13.0 profiler host API, see
// docs/concepts/tensor-util.md):
//   Turing, Ampere GA10x, Ada   sm__pipe_tensor_op_{hmma,imma}_cycles_active
//   GA100                       ... plus sm__pipe_tensor_op_dmma_cycles_active
//   GH100                       ... plus sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_...
//   Blackwell                   sm__pipe_tensor_subpipe_{hmma,imma[,dmma]}_cycles_active
// plus sm__throughput and dram__throughput (percent of peak, elapsed) for context. Integrated
// chips (GA10B, GB10B, GB20B) have no dram__throughput.
//
// tests/host/profiling/test_metric_table.cpp proves, with CUPTI's host API and no GPU, that
// every metric listed here exists on every chip listed here.
#pragma once

#include "tcbench/schema.hpp"

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace tcbench::profiling {

// One metric: the Google Benchmark counter name (a definition of tcbench/schema.hpp) and the
// full CUPTI/ncu metric name.
struct Metric {
  std::string_view counter;  // "tensor_active_pct"
  std::string_view name;     // "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"
};

struct ChipMetrics {
  std::string_view chip;        // CUPTI's chip name, e.g. "GH100"
  std::string_view family;      // "Hopper", "Ada", ... for messages and docs
  std::vector<Metric> metrics;  // headline first, then sub-pipes, then throughput context
};

// The headline metric, the same on every chip.
inline constexpr Metric kTensorActive{
    counters::tensor_active_pct.name,
    "sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_active"};

// The metrics for `chip`, or nullopt when tcbench's table does not know the chip.
std::optional<ChipMetrics> metrics_for_chip(std::string_view chip);

// Every chip the table claims, in table order.
std::span<const std::string_view> claimed_chips();

// Chips CUPTI 13.0 supports that tcbench deliberately leaves out, with the reason.
struct UnclaimedChip {
  std::string_view chip;
  std::string_view reason;
};
std::span<const UnclaimedChip> unclaimed_chips();

// Every counter name any chip can report (the union), in a stable order: what ncu's cross-check
// (scripts/tcbench_tools/profile.py) and the report section know about.
std::vector<std::string_view> all_counters();

}  // namespace tcbench::profiling
