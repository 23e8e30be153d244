// GPU timing: CUDA events around the work only, warm-up first, L2 flushed between samples
// outside the timed pair, and robust statistics over the samples.
#pragma once

#include "tcbench/cuda_owners.hpp"

#include <cstddef>
#include <functional>
#include <span>
#include <vector>

namespace tcbench {

// Order statistics of a set of samples (seconds, or anything else). Host code; tested on the CPU.
struct SampleStats {
  std::size_t count = 0;
  double min = 0, max = 0, mean = 0, median = 0, p10 = 0, p90 = 0, stddev = 0;
  // (p90 - p10) / median: the spread reported beside every median, robust to one slow sample.
  double rel_spread() const { return median > 0 ? (p90 - p10) / median : 0.0; }
};
// Percentiles by linear interpolation between order statistics (numpy's default "linear").
SampleStats compute_stats(std::span<const double> samples);

// Evicts the L2 between samples by writing a buffer twice the L2 size, so each sample reads its
// inputs from DRAM as a real layer would (nvbench's cold measurement does the same).
class L2Flusher {
 public:
  explicit L2Flusher(std::size_t l2_bytes);
  void flush(cudaStream_t stream);

 private:
  DeviceBuffer<unsigned char> buffer_;
  unsigned char value_ = 0;
};

struct TimingOptions {
  int warmup = 3;  // untimed runs first: clocks ramp up, lazy module loading happens
  bool flush_l2 = true;
};

// Times `work` (which enqueues GPU work on `stream`) with a pair of events; returns seconds.
class GpuTimer {
 public:
  double time(cudaStream_t stream, const std::function<void(cudaStream_t)>& work);

 private:
  Event start_, stop_;
};

}  // namespace tcbench
