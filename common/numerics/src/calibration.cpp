#include "tcbench/numerics/calibration.hpp"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "tcbench/numerics/quantization.hpp"

namespace tcbench::numerics {

AbsHistogram::AbsHistogram(float range_max, int num_bins) : range_max_(range_max) {
  if (!(range_max > 0.0f) || !is_finite(range_max))
    throw std::invalid_argument("AbsHistogram: range_max must be positive and finite, got " +
                                std::to_string(range_max));
  if (num_bins < 1)
    throw std::invalid_argument("AbsHistogram: num_bins must be >= 1, got " +
                                std::to_string(num_bins));
  counts_.assign(static_cast<std::size_t>(num_bins), 0);
}

void AbsHistogram::add(std::span<const float> xs) {
  const int bins = num_bins();
  for (float x : xs) {
    const int b = abs_histogram_bin(x, range_max_, bins);
    if (b < 0) {
      ++non_finite_;
      continue;
    }
    ++counts_[static_cast<std::size_t>(b)];
    ++total_;
    if (std::fabs(x) > max_seen_) max_seen_ = std::fabs(x);
  }
}

void AbsHistogram::add_counts(std::span<const HistCount> counts, float max_seen,
                              HistCount non_finite) {
  if (counts.size() != counts_.size())
    throw std::invalid_argument("AbsHistogram::add_counts: " + std::to_string(counts.size()) +
                                " bins, histogram has " + std::to_string(counts_.size()));
  for (std::size_t i = 0; i < counts.size(); ++i) {
    counts_[i] += counts[i];
    total_ += counts[i];
  }
  if (max_seen > max_seen_) max_seen_ = max_seen;
  non_finite_ += non_finite;
}

void AbsHistogram::merge(const AbsHistogram& other) {
  if (other.range_max_ != range_max_)
    throw std::invalid_argument("AbsHistogram::merge: ranges differ (" +
                                std::to_string(range_max_) + " vs " +
                                std::to_string(other.range_max_) + ")");
  add_counts(other.counts_, other.max_seen_, other.non_finite_);
}

double AbsHistogram::bin_lower(int i) const {
  return static_cast<double>(range_max_) * i / num_bins();
}
double AbsHistogram::bin_upper(int i) const {
  return bin_lower(i + 1);
}
double AbsHistogram::bin_center(int i) const {
  return (bin_lower(i) + bin_upper(i)) / 2;
}

namespace {

// Empty and all-zero histograms have no defensible amax: say so instead of returning 0.
void require_calibratable(const AbsHistogram& h, const char* who) {
  if (h.total() == 0)
    throw std::invalid_argument(std::string(who) + ": the histogram holds no finite samples (" +
                                std::to_string(h.non_finite()) +
                                " NaN/Inf counted apart); there is nothing to calibrate");
  if (!(h.max_seen() > 0.0f))
    throw std::invalid_argument(std::string(who) + ": all " + std::to_string(h.total()) +
                                " samples are 0; an amax of 0 would quantize everything to 0");
}

}  // namespace

float calibrate_max(const AbsHistogram& h) {
  require_calibratable(h, "calibrate_max");
  return h.max_seen();
}

// pytorch-quantization's _compute_amax_percentile: cdf = running sum of count / total (summed in
// that order, as np.cumsum does), idx = the first bin whose cdf reaches p / 100 (searchsorted,
// side left), amax = the LOWER edge of that bin. When rounding leaves the last cdf just below
// 1, p = 100 finds no bin and returns the top edge, range_max, exactly as numpy does.
float calibrate_percentile(const AbsHistogram& h, double percentile) {
  if (!(percentile > 0.0 && percentile <= 100.0))
    throw std::invalid_argument("calibrate_percentile: percentile must be in (0, 100], got " +
                                std::to_string(percentile));
  require_calibratable(h, "calibrate_percentile");
  const double target = percentile / 100.0;
  const auto total = static_cast<double>(h.total());
  const auto counts = h.counts();
  double cdf = 0.0;
  for (int i = 0; i < h.num_bins(); ++i) {
    cdf += static_cast<double>(counts[static_cast<std::size_t>(i)]) / total;
    if (cdf >= target) return static_cast<float>(h.bin_lower(i));
  }
  return static_cast<float>(h.bin_lower(h.num_bins()));
}

namespace {

void check_candidates(const AbsHistogram& h, int start_bin, int stride, const char* who) {
  if (start_bin < 1 || start_bin > h.num_bins() || stride < 1)
    throw std::invalid_argument(std::string(who) + ": start_bin " + std::to_string(start_bin) +
                                " and stride " + std::to_string(stride) +
                                " do not fit a histogram of " + std::to_string(h.num_bins()) +
                                " bins");
}

// KL(P || Q) for threshold i (in bins), following the TensorRT recipe: P = bins[0, i) with the
// mass beyond folded into bin i-1; Q = bins[0, i) (without the outliers) merged into `levels`
// groups, each group's mass spread evenly over its nonzero bins.
double kl_for_threshold(std::span<const HistCount> bins, int i, int levels) {
  const auto n = static_cast<std::size_t>(i);
  std::vector<double> p(n);
  double outliers = 0.0;
  for (std::size_t j = 0; j < bins.size(); ++j) {
    const auto c = static_cast<double>(bins[j]);
    if (j < n)
      p[j] = c;
    else
      outliers += c;
  }
  p[n - 1] += outliers;

  // Bin j belongs to level floor(j * levels / i): the groups np.digitize makes over
  // linspace(0, i, levels + 1).
  std::vector<double> level_mass(static_cast<std::size_t>(levels), 0.0);
  std::vector<double> level_nonzero(static_cast<std::size_t>(levels), 0.0);
  auto level_of = [&](std::size_t j) {
    return static_cast<std::size_t>(static_cast<long long>(j) * levels / i);
  };
  for (std::size_t j = 0; j < n; ++j) {
    if (bins[j] == 0) continue;
    level_mass[level_of(j)] += static_cast<double>(bins[j]);
    level_nonzero[level_of(j)] += 1.0;
  }
  std::vector<double> q(n, 0.0);
  for (std::size_t j = 0; j < n; ++j)
    if (bins[j] != 0) q[j] = level_mass[level_of(j)] / level_nonzero[level_of(j)];

  double p_sum = 0.0, q_sum = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    p_sum += p[j];
    q_sum += q[j];
  }
  if (p_sum == 0.0) return 0.0;
  if (q_sum == 0.0) return std::numeric_limits<double>::infinity();
  double kl = 0.0;
  for (std::size_t j = 0; j < n; ++j) {
    if (p[j] == 0.0) continue;
    const double pj = p[j] / p_sum, qj = q[j] / q_sum;
    if (qj == 0.0) return std::numeric_limits<double>::infinity();
    kl += pj * std::log(pj / qj);
  }
  return kl;
}

}  // namespace

std::vector<double> entropy_divergences(const AbsHistogram& h, const EntropyOptions& opt) {
  check_candidates(h, opt.start_bin, opt.stride, "entropy_divergences");
  if (opt.num_levels < 1)
    throw std::invalid_argument("entropy_divergences: num_levels must be >= 1");
  require_calibratable(h, "entropy_divergences");
  std::vector<HistCount> bins(h.counts().begin(), h.counts().end());
  // pytorch-quantization's _compute_amax_entropy copies bin 1 over bin 0 before the search.
  // Post-ReLU activations put about half their values exactly at 0; left as it is, that spike
  // dominates P and drags the KL minimum far below the signal's real extent.
  if (opt.replace_zero_bin && bins.size() >= 2) bins[0] = bins[1];
  HistCount kept = 0;
  for (HistCount c : bins) kept += c;
  if (kept == 0)
    throw std::invalid_argument(
        "entropy_divergences: every sample lies in the first bin, which the entropy method "
        "replaces; use a smaller range_max or another calibrator");
  std::vector<double> out;
  for (int i = opt.start_bin; i <= h.num_bins(); i += opt.stride)
    out.push_back(kl_for_threshold(bins, i, opt.num_levels));
  return out;
}

float calibrate_entropy(const AbsHistogram& h, const EntropyOptions& opt) {
  const std::vector<double> kl = entropy_divergences(h, opt);
  // The largest candidate among equal minima, as pytorch-quantization picks (last argmin).
  std::size_t best = 0;
  for (std::size_t j = 1; j < kl.size(); ++j)
    if (kl[j] <= kl[best]) best = j;
  const int bins = opt.start_bin + static_cast<int>(best) * opt.stride;
  return static_cast<float>(h.bin_lower(bins));  // the upper edge of bin `bins - 1`
}

float calibrate_mse(const AbsHistogram& h, const MseOptions& opt) {
  // Candidates are bin centres from index start_bin, as pytorch-quantization's _compute_amax_mse.
  check_candidates(h, opt.start_bin + 1, opt.stride, "calibrate_mse");
  require_calibratable(h, "calibrate_mse");
  const auto counts = h.counts();
  double best_err = std::numeric_limits<double>::infinity();
  float best_amax = 0.0f;
  for (int i = opt.start_bin; i < h.num_bins(); i += opt.stride) {
    const auto amax = static_cast<float>(h.bin_center(i));
    double err = 0.0;
    for (int j = 0; j < h.num_bins(); ++j) {
      const HistCount c = counts[static_cast<std::size_t>(j)];
      if (c == 0) continue;
      const auto x = static_cast<float>(h.bin_center(j));
      const double d = static_cast<double>(fake_quant_int8(x, amax)) - x;
      err += static_cast<double>(c) * d * d;
    }
    if (err < best_err) {
      best_err = err;
      best_amax = amax;
    }
  }
  return best_amax;
}

float calibrate(const AbsHistogram& h, Calibrator c) {
  switch (c) {
    case Calibrator::max:
      return calibrate_max(h);
    case Calibrator::percentile:
      return calibrate_percentile(h);
    case Calibrator::entropy:
      return calibrate_entropy(h);
    case Calibrator::mse:
      return calibrate_mse(h);
  }
  throw std::invalid_argument("calibrate: unknown calibrator");
}

}  // namespace tcbench::numerics
