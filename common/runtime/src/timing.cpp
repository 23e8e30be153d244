#include "tcbench/timing.hpp"

#include "tcbench/numerics/order_statistics.hpp"

#include <algorithm>
#include <cmath>

namespace tcbench {

SampleStats compute_stats(std::span<const double> samples) {
  SampleStats s;
  s.count = samples.size();
  if (samples.empty()) return s;
  std::vector<double> v(samples.begin(), samples.end());
  std::sort(v.begin(), v.end());
  s.min = v.front();
  s.max = v.back();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  double sq = 0;
  for (double x : v) sq += (x - s.mean) * (x - s.mean);
  s.stddev = v.size() > 1 ? std::sqrt(sq / static_cast<double>(v.size() - 1)) : 0.0;
  s.median = numerics::percentile_of_sorted(v, 0.5);
  s.p10 = numerics::percentile_of_sorted(v, 0.1);
  s.p90 = numerics::percentile_of_sorted(v, 0.9);
  return s;
}

int warmup_batch_runs(double seconds_per_run, double remaining_seconds) {
  if (!(remaining_seconds > 0)) return 0;
  if (!(seconds_per_run > 0)) return 1000;  // below the event timer's resolution
  const double runs = std::ceil(remaining_seconds / seconds_per_run);
  return static_cast<int>(std::clamp(runs, 1.0, 1000.0));
}

L2Flusher::L2Flusher(std::size_t l2_bytes) : buffer_(std::max<std::size_t>(2 * l2_bytes, 1)) {}

void L2Flusher::flush(cudaStream_t stream) {
  // A different value each time, so no part of the memory system can elide the write.
  ++value_;
  TCB_CUDA(cudaMemsetAsync(buffer_.get(), value_, buffer_.bytes(), stream));
}

double GpuTimer::time(cudaStream_t stream, const std::function<void(cudaStream_t)>& work) {
  start_.record(stream);
  work(stream);
  stop_.record(stream);
  stop_.synchronize();
  return static_cast<double>(stop_.elapsed_ms_since(start_)) * 1e-3;
}

}  // namespace tcbench
