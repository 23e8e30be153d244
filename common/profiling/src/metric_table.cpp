#include "tcbench/profiling/metric_table.hpp"

#include <array>

namespace tcbench::profiling {
namespace {

// How a chip names its per-operation tensor pipes.
enum class SubPipes {
  op,       // Turing .. Hopper: sm__pipe_tensor_op_<kind>_cycles_active
  subpipe,  // Blackwell: sm__pipe_tensor_subpipe_<kind>_cycles_active
};

struct ChipRow {
  std::string_view chip;
  std::string_view family;
  SubPipes style;
  bool dmma;    // an FP64 tensor sub-pipe (GA100, GH100, GB100/GB102)
  bool hopper;  // GH100's HMMA/HGMMA/QGMMA breakdown
  bool dram;    // integrated chips (GA10B, GB10B, GB20B) have no dram__throughput
};

// Enumerated with cuptiProfilerHostGetBaseMetrics (CUPTI 13.0) for each chip; the host test
// re-checks every row against CUPTI.
constexpr std::array<ChipRow, 28> kChips{{
    {"TU102", "Turing", SubPipes::op, false, false, true},
    {"TU104", "Turing", SubPipes::op, false, false, true},
    {"TU106", "Turing", SubPipes::op, false, false, true},
    {"TU116", "Turing", SubPipes::op, false, false, true},
    {"TU117", "Turing", SubPipes::op, false, false, true},
    {"GA100", "Ampere (GA100)", SubPipes::op, true, false, true},
    {"GA102", "Ampere (GA10x)", SubPipes::op, false, false, true},
    {"GA103", "Ampere (GA10x)", SubPipes::op, false, false, true},
    {"GA104", "Ampere (GA10x)", SubPipes::op, false, false, true},
    {"GA106", "Ampere (GA10x)", SubPipes::op, false, false, true},
    {"GA107", "Ampere (GA10x)", SubPipes::op, false, false, true},
    {"GA10B", "Ampere (GA10B, integrated)", SubPipes::op, false, false, false},
    {"AD102", "Ada", SubPipes::op, false, false, true},
    {"AD103", "Ada", SubPipes::op, false, false, true},
    {"AD104", "Ada", SubPipes::op, false, false, true},
    {"AD106", "Ada", SubPipes::op, false, false, true},
    {"AD107", "Ada", SubPipes::op, false, false, true},
    {"GH100", "Hopper", SubPipes::op, true, true, true},
    {"GB100", "Blackwell (GB100)", SubPipes::subpipe, true, false, true},
    {"GB102", "Blackwell (GB100)", SubPipes::subpipe, true, false, true},
    {"GB110", "Blackwell Ultra (GB110)", SubPipes::subpipe, false, false, true},
    {"GB10B", "Blackwell (GB10B, integrated)", SubPipes::subpipe, false, false, false},
    {"GB202", "Blackwell (GB20x)", SubPipes::subpipe, false, false, true},
    {"GB203", "Blackwell (GB20x)", SubPipes::subpipe, false, false, true},
    {"GB205", "Blackwell (GB20x)", SubPipes::subpipe, false, false, true},
    {"GB206", "Blackwell (GB20x)", SubPipes::subpipe, false, false, true},
    {"GB207", "Blackwell (GB20x)", SubPipes::subpipe, false, false, true},
    {"GB20B", "Blackwell (GB20B, integrated)", SubPipes::subpipe, false, false, false},
}};

constexpr std::array<std::string_view, kChips.size()> chip_names() {
  std::array<std::string_view, kChips.size()> names{};
  for (std::size_t i = 0; i < kChips.size(); ++i) names[i] = kChips[i].chip;
  return names;
}
constexpr auto kChipNames = chip_names();

constexpr std::array<UnclaimedChip, 2> kUnclaimed{{
    {"GV100", "Volta (compute capability 7.0) is below tcbench's minimum of 7.5"},
    {"GV11B", "CUPTI 13.0's host API cannot initialize it (CUPTI_ERROR_NOT_SUPPORTED)"},
}};

constexpr Metric kOpHmma{counters::tensor_hmma_pct.name,
                         "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"};
constexpr Metric kOpImma{counters::tensor_imma_pct.name,
                         "sm__pipe_tensor_op_imma_cycles_active.avg.pct_of_peak_sustained_active"};
constexpr Metric kOpDmma{counters::tensor_dmma_pct.name,
                         "sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active"};
constexpr Metric kHopperFp{
    counters::tensor_hmma_hgmma_qgmma_pct.name,
    "sm__pipe_tensor_op_hmma_type_hmma_hgmma_qgmma_cycles_active.avg.pct_of_peak_sustained_active"};
constexpr Metric kSubHmma{
    counters::tensor_hmma_pct.name,
    "sm__pipe_tensor_subpipe_hmma_cycles_active.avg.pct_of_peak_sustained_active"};
constexpr Metric kSubImma{
    counters::tensor_imma_pct.name,
    "sm__pipe_tensor_subpipe_imma_cycles_active.avg.pct_of_peak_sustained_active"};
constexpr Metric kSubDmma{
    counters::tensor_dmma_pct.name,
    "sm__pipe_tensor_subpipe_dmma_cycles_active.avg.pct_of_peak_sustained_active"};
constexpr Metric kSmThroughput{counters::sm_throughput_pct.name,
                               "sm__throughput.avg.pct_of_peak_sustained_elapsed"};
constexpr Metric kDramThroughput{counters::dram_throughput_pct.name,
                                 "dram__throughput.avg.pct_of_peak_sustained_elapsed"};

// Report order of every counter (the union over chips).
constexpr std::array<std::string_view, 7> kCounterOrder{
    kTensorActive.counter, kOpHmma.counter,       kOpImma.counter,        kOpDmma.counter,
    kHopperFp.counter,     kSmThroughput.counter, kDramThroughput.counter};

}  // namespace

std::optional<ChipMetrics> metrics_for_chip(std::string_view chip) {
  for (const ChipRow& row : kChips) {
    if (row.chip != chip) continue;
    ChipMetrics out{row.chip, row.family, {kTensorActive}};
    const bool op = row.style == SubPipes::op;
    out.metrics.push_back(op ? kOpHmma : kSubHmma);
    out.metrics.push_back(op ? kOpImma : kSubImma);
    if (row.dmma) out.metrics.push_back(op ? kOpDmma : kSubDmma);
    if (row.hopper) out.metrics.push_back(kHopperFp);
    out.metrics.push_back(kSmThroughput);
    if (row.dram) out.metrics.push_back(kDramThroughput);
    return out;
  }
  return std::nullopt;
}

std::span<const std::string_view> claimed_chips() {
  return kChipNames;
}

std::span<const UnclaimedChip> unclaimed_chips() {
  return kUnclaimed;
}

std::vector<std::string_view> all_counters() {
  return {kCounterOrder.begin(), kCounterOrder.end()};
}

}  // namespace tcbench::profiling
