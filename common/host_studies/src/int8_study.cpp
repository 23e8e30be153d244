#include "tcbench/studies/int8_study.hpp"

#include <cstdio>
#include <stdexcept>

#include "tcbench/numerics/formats.hpp"

namespace tcbench::studies {
namespace {

// Data splits of one task: different sample streams, the same class centroids.
constexpr std::uint64_t kTrainSplit = 1, kCalibrationSplit = 2, kTestSplit = 3;

template <class Forward>
void score(Int8Variant& v, const Dataset& test, const std::vector<int>& fp32_top1, Forward f) {
  std::size_t correct = 0, agree = 0;
  for (std::size_t s = 0; s < test.size(); ++s) {
    const int top1 = argmax(f(test.row(s)));
    correct += top1 == test.y[s];
    agree += top1 == fp32_top1[s];
  }
  v.accuracy = static_cast<double>(correct) / static_cast<double>(test.size());
  v.agreement = static_cast<double>(agree) / static_cast<double>(test.size());
}

// The FP16/BF16 tensor-core path: weights and each layer's input rounded to the format, products
// accumulated in FP32 (what HMMA with FP32 accumulation computes, up to summation order).
Mlp rounded_weights(const Mlp& model, Format f) {
  Mlp r = model;
  for (DenseLayer& l : r.layers)
    for (float& w : l.w) w = round_trip(w, f);
  return r;
}

std::vector<float> forward_rounded(const Mlp& rounded, std::span<const float> x, Format f) {
  std::vector<float> cur(x.begin(), x.end());
  for (std::size_t li = 0; li < rounded.layers.size(); ++li) {
    for (float& v : cur) v = round_trip(v, f);
    Mlp one;
    one.layers.push_back(rounded.layers[li]);
    std::vector<float> next = forward_fp32(one, cur);
    if (li + 1 < rounded.layers.size())
      for (float& v : next) v = v < 0.0f ? 0.0f : v;
    cur = std::move(next);
  }
  return cur;
}

}  // namespace

const Int8Variant& Int8StudyResult::get(const std::string& name) const {
  for (const Int8Variant& v : variants)
    if (v.name == name) return v;
  throw std::out_of_range("Int8StudyResult: no variant named " + name);
}

Int8StudyResult run_int8_study(const Int8StudyOptions& opt) {
  if (opt.widths.front() != opt.data.features || opt.widths.back() != opt.data.classes)
    throw std::invalid_argument(
        "run_int8_study: widths must start with the feature count and "
        "end with the class count");
  const Dataset train_set = make_outlier_dataset(opt.data, kTrainSplit, opt.train_samples);
  const Dataset calib_set =
      make_outlier_dataset(opt.data, kCalibrationSplit, opt.calibration_samples);
  const Dataset test_set = make_outlier_dataset(opt.data, kTestSplit, opt.test_samples);

  Mlp fp32 = make_mlp(opt.widths, opt.model_seed);
  train(fp32, train_set, opt.fp32_training);

  Int8StudyResult r{opt.widths, test_set.size(), {}};
  std::vector<int> fp32_top1(test_set.size());
  for (std::size_t s = 0; s < test_set.size(); ++s)
    fp32_top1[s] = argmax(forward_fp32(fp32, test_set.row(s)));
  Int8Variant base{"fp32", "fp32", {}};
  score(base, test_set, fp32_top1, [&](auto x) { return forward_fp32(fp32, x); });
  r.variants.push_back(base);
  for (const auto& [name, format] : {std::pair{"fp16", Format::fp16}, {"bf16", Format::bf16}}) {
    const Mlp rounded = rounded_weights(fp32, format);
    Int8Variant v{name, "float", {}};
    score(v, test_set, fp32_top1, [&](auto x) { return forward_rounded(rounded, x, format); });
    r.variants.push_back(std::move(v));
  }

  const std::vector<AbsHistogram> hists = activation_histograms(fp32, calib_set);
  auto add_ptq = [&](std::string name, std::vector<float> amax) {
    const Int8Mlp q = quantize_mlp(fp32, amax);
    Int8Variant v{std::move(name), "ptq", std::move(amax)};
    score(v, test_set, fp32_top1, [&](auto x) { return forward_int8(q, x); });
    r.variants.push_back(std::move(v));
  };
  const std::vector<float> max_amax = calibrate_activations(hists, Calibrator::max);
  add_ptq("ptq_max", max_amax);
  add_ptq("ptq_p99.9", calibrate_activations(hists, Calibrator::percentile, 99.9));
  const std::vector<float> p9999 = calibrate_activations(hists, Calibrator::percentile, 99.99);
  add_ptq("ptq_p99.99", p9999);
  add_ptq("ptq_entropy", calibrate_activations(hists, Calibrator::entropy));
  add_ptq("ptq_mse", calibrate_activations(hists, Calibrator::mse));
  std::vector<float> bad = p9999;
  for (float& a : bad) a *= opt.bad_clip_fraction;
  add_ptq("ptq_bad_clip", bad);

  // QAT: fine-tune a copy of the FP32 weights with calibrated activation amax values held fixed
  // (calibrate, then train, as pytorch-quantization's QAT recipe does), then deploy like PTQ.
  const std::vector<float> qat_amax =
      calibrate_activations(hists, opt.qat_calibrator, opt.qat_percentile);
  Mlp qat = fp32;
  TrainOptions qopt = opt.qat_training;
  qopt.fake_quant.activation_amax = qat_amax;
  train(qat, train_set, qopt);
  const Int8Mlp q = quantize_mlp(qat, qat_amax);
  Int8Variant v{"qat", "qat", qat_amax};
  score(v, test_set, fp32_top1, [&](auto x) { return forward_int8(q, x); });
  r.variants.push_back(std::move(v));
  return r;
}

std::string format_int8_table(const Int8StudyResult& r) {
  std::string out =
      "| variant | activation amax (layer inputs) | accuracy | top-1 agreement with FP32 |\n"
      "|---|---|---|---|\n";
  char buf[160];
  for (const Int8Variant& v : r.variants) {
    std::string amax = v.activation_amax.empty() ? "-" : "";
    for (std::size_t i = 0; i < v.activation_amax.size(); ++i) {
      std::snprintf(buf, sizeof buf, "%s%.3g", i ? " / " : "", v.activation_amax[i]);
      amax += buf;
    }
    std::snprintf(buf, sizeof buf, "| %s | %s | %.2f %% | %.2f %% |\n", v.name.c_str(),
                  amax.c_str(), 100 * v.accuracy, 100 * v.agreement);
    out += buf;
  }
  return out;
}

}  // namespace tcbench::studies
