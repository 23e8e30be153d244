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
// inputs from DRAM as a real layer would. (nvbench's cold measurement memsets a buffer of exactly
// the L2 size; twice that also evicts lines a non-LRU replacement policy would keep.)
class L2Flusher {
 public:
  explicit L2Flusher(std::size_t l2_bytes);
  void flush(cudaStream_t stream);

 private:
  DeviceBuffer<unsigned char> buffer_;
  unsigned char value_ = 0;
};

// When to stop taking samples: at least min_samples of them AND at least min_seconds of
// measured time (nvbench's rule: a slow configuration still gets 10 samples, a fast one enough
// to fill the budget), but never more than max_samples once the minimum count is met.
struct SamplingPolicy {
  std::size_t min_samples = 10;
  double min_seconds = 0.5;
  std::size_t max_samples = 10000;
  // Warm-up before the first sample, in seconds of work (nvbench also warms up by time): clocks
  // ramp up, lazy module loading and cuBLASLt's first-call setup happen here, not in a sample.
  double warmup_seconds = 0.05;

  bool done(std::size_t samples, double total_seconds) const {
    if (samples < min_samples) return false;
    return total_seconds >= min_seconds || samples >= max_samples;
  }
};

// How many runs the next warm-up batch should have, given the measured time of one run and the
// warm-up time still missing: enough to cover it, at least 1 and at most 1000 per batch.
int warmup_batch_runs(double seconds_per_run, double remaining_seconds);

// Times `work` (which enqueues GPU work on `stream`) with a pair of events; returns seconds.
class GpuTimer {
 public:
  double time(cudaStream_t stream, const std::function<void(cudaStream_t)>& work);

 private:
  Event start_, stop_;
};

}  // namespace tcbench
