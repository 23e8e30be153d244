// INT8 calibration: choose the amax that a symmetric quantizer clips at, from a histogram of |x|.
// The four calibrators follow NVIDIA's pytorch-quantization (calib/max.py, calib/histogram.py)
// and TensorRT's entropy calibration (GTC 2017 S7310, "8-bit Inference with TensorRT"):
//   max         amax = the largest |x| seen
//   percentile  amax = the LOWER edge of the bin where the CDF of |x| reaches p (default 99.99%)
//   entropy     bin 0 is replaced by bin 1 (the zero spike of post-ReLU data), then the largest
//               threshold (bin edge, from bin 128 up) minimizing KL(P || Q), where P is the
//               histogram clipped at the threshold (outliers folded into its last bin) and Q is P
//               requantized to 128 levels and expanded back
//   mse         the bin centre minimizing the histogram-weighted squared fake-quant error
// Each returns amax (equal, on the golden histograms of the tests, to pytorch-quantization's
// result); int8_scale(amax) then gives the quantization scale. NaN/Inf samples are counted
// apart (non_finite) and never enter a calibrator. An empty or all-zero histogram, or a
// percentile outside (0, 100], throws std::invalid_argument with a sentence.
#pragma once

#include "tcbench/numerics/enum_names.hpp"
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "tcbench/numerics/host_device.hpp"

namespace tcbench::numerics {

inline constexpr int kCalibBins = 2048;

// The type a kernel counts in: atomicAdd has an unsigned long long overload.
using HistCount = unsigned long long;

// Bin of |x| in a histogram of num_bins equal bins over [0, range_max]; magnitudes at or above
// range_max land in the last bin. Returns -1 for NaN/Inf, which callers count apart.
TCB_HD inline int abs_histogram_bin(float x, float range_max, int num_bins) {
  if (!is_finite(x)) return -1;
  const float pos = fabsf(x) / (range_max / static_cast<float>(num_bins));
  const float last = static_cast<float>(num_bins - 1);
  return static_cast<int>(pos < last ? pos : last);
}

// Fixed bins and range, so batches (and device-filled count arrays) merge by addition. Choose
// range_max from a max pass over the calibration data, or generously from prior knowledge.
class AbsHistogram {
 public:
  explicit AbsHistogram(float range_max, int num_bins = kCalibBins);

  void add(std::span<const float> xs);
  // For counts produced elsewhere (a kernel using abs_histogram_bin) over the same bins.
  void add_counts(std::span<const HistCount> counts, float max_seen, HistCount non_finite = 0);
  void merge(const AbsHistogram& other);

  int num_bins() const { return static_cast<int>(counts_.size()); }
  float range_max() const { return range_max_; }
  float bin_width() const { return range_max_ / static_cast<float>(counts_.size()); }
  double bin_lower(int i) const;
  double bin_upper(int i) const;
  double bin_center(int i) const;
  std::span<const HistCount> counts() const { return counts_; }
  HistCount total() const { return total_; }
  HistCount non_finite() const { return non_finite_; }
  float max_seen() const { return max_seen_; }

  friend bool operator==(const AbsHistogram&, const AbsHistogram&) = default;

 private:
  float range_max_;
  std::vector<HistCount> counts_;
  HistCount total_ = 0;
  HistCount non_finite_ = 0;
  float max_seen_ = 0.0f;
};

enum class Calibrator { max, percentile, entropy, mse };
inline constexpr EnumName<Calibrator> kCalibratorNames[] = {{Calibrator::max, "max"},
                                                            {Calibrator::percentile, "percentile"},
                                                            {Calibrator::entropy, "entropy"},
                                                            {Calibrator::mse, "mse"}};
static_assert(names_every_enumerator(kCalibratorNames, Calibrator::mse));
constexpr std::string_view name(Calibrator c) {
  return name_in(kCalibratorNames, c);
}

struct EntropyOptions {
  int start_bin = 128;   // first candidate threshold (in bins)
  int stride = 1;        // step between candidates
  int num_levels = 128;  // 2^(bits-1) quantized levels for the magnitude
  // pytorch-quantization sets bins[0] = bins[1] before the search; false only to show what
  // the zero spike does without it.
  bool replace_zero_bin = true;
};

struct MseOptions {
  int start_bin = 128;
  int stride = 1;
};

float calibrate_max(const AbsHistogram& h);
float calibrate_percentile(const AbsHistogram& h, double percentile = 99.99);
float calibrate_entropy(const AbsHistogram& h, const EntropyOptions& opt = {});
float calibrate_mse(const AbsHistogram& h, const MseOptions& opt = {});
float calibrate(const AbsHistogram& h, Calibrator c);

// KL(P || Q) (after the zero-bin replacement) for each entropy candidate i = start_bin, start_bin +
// stride, ... <= num_bins (element j is candidate start_bin + j * stride); +inf where Q misses mass
// P has.
std::vector<double> entropy_divergences(const AbsHistogram& h, const EntropyOptions& opt = {});

}  // namespace tcbench::numerics
