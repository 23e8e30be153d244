// --plan: how long the selected rows take by the harness's own rules, without running them.
//
// A row's work comes from its name (m, n, k and batch of a GEMM; elements of a memory-bound
// kernel) and its precision's element types (precision.hpp). Its median is bounded below by the
// GPU's dense datasheet peak and its DRAM bandwidth (peaks.hpp): a bound, as no row runs faster.
// The seconds are what SamplingPolicy spends at that median: warm-up, then samples until
// min_seconds (10 to 10,000 of them). A row whose name names no work (a peak loop, a training
// run, a study) gets the harness's minimum: warm-up plus min_seconds. Verification, baselines
// and counter passes come on top (gpu_check's cost model adds them).
#pragma once

#include "tcbench/peaks.hpp"
#include "tcbench/schema.hpp"
#include "tcbench/timing.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace tcbench::bench {

struct RowPlan {
  double flops = 0;  // 2 m n k (x batch) of a GEMM row, else 0
  double bytes = 0;  // a GEMM's operands read and result written once; 2 x elements x size
  std::optional<double> median_s;  // max(flops / peak, bytes / bandwidth); nullopt: no work named
  std::size_t samples = 0;         // what the policy takes at that median (0: no median)
  double seconds = 0;              // repetitions x (warm-up + samples x median), or the minimum
};

// The GPU of this machine as a plan sees it: its datasheet row when the table knows it, else the
// peak model's figures (max clock, memory clock x bus). `spec` must outlive the result.
NamedGpu plan_gpu_of(const GpuSpec& spec);

RowPlan plan_row(const BenchName& name, const NamedGpu& gpu, const SamplingPolicy& policy,
                 long repetitions);

// The plan as JSON lines: first the GPU (name, source, compute capability, SMs, peak_gbps and
// the dense peak_tflops per precision), the policy and the totals; then one object per row
// (name, flops, bytes, median_s, samples, seconds; null where there is no median).
std::string plan_jsonl(const std::vector<std::string>& names, const NamedGpu& gpu,
                       const SamplingPolicy& policy, long repetitions);

}  // namespace tcbench::bench
