#include "tcbench/studies/mixed_precision_training.hpp"

#include "tcbench/numerics/random.hpp"

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace tcbench::studies {

Storage storage_of(TrainingMode m) {
  switch (m) {
    case TrainingMode::fp32:
      return Storage::fp32;
    case TrainingMode::bf16:
      return Storage::bf16;
    default:
      return Storage::fp16;
  }
}

Precision precision_of(TrainingMode m) {
  return *parse_precision(name(storage_of(m)));
}

void TrainingConfig::validate() const {
  auto positive = [](int v, const char* what) {
    if (v < 1)
      throw std::invalid_argument(std::string("TrainingConfig: ") + what + " must be >= 1, got " +
                                  std::to_string(v));
  };
  positive(batch, "batch");
  positive(inputs, "inputs");
  positive(hidden, "hidden");
  positive(outputs, "outputs");
  positive(steps, "steps");
  auto finite_positive = [](float v, const char* what) {
    if (!(v > 0.0f) || !is_finite(v))
      throw std::invalid_argument(std::string("TrainingConfig: ") + what +
                                  " must be positive and finite, got " + std::to_string(v));
  };
  finite_positive(target_scale, "target_scale");
  finite_positive(learning_rate, "learning_rate");
  finite_positive(eps, "eps");
  if (!(beta1 >= 0.0f && beta1 < 1.0f) || !(beta2 >= 0.0f && beta2 < 1.0f))
    throw std::invalid_argument("TrainingConfig: Adam's beta1 and beta2 must be in [0, 1)");
  StaticLossScaler{static_scale};  // the constructors are the one place scales are judged
  DynamicLossScaler{dynamic};
}

float TrainingRun::final_loss() const {
  return steps.empty() ? NAN : steps.back().loss;
}
int TrainingRun::skipped_steps() const {
  return static_cast<int>(
      std::count_if(steps.begin(), steps.end(), [](const TrainingStep& s) { return s.skipped; }));
}
int TrainingRun::non_finite_steps() const {
  return static_cast<int>(std::count_if(
      steps.begin(), steps.end(), [](const TrainingStep& s) { return s.tally.non_finite > 0; }));
}
double TrainingRun::underflow_pct() const {
  GradientTally t;
  for (const TrainingStep& s : steps) t += s.tally;
  return t.stored == 0 ? 0.0
                       : 100.0 * static_cast<double>(t.flushed) / static_cast<double>(t.stored);
}

std::optional<std::string> unusable_scale_reason(float scale, int step) {
  if (scale != 0.0f && !(std::fabs(scale) < FLT_MIN)) return std::nullopt;
  char text[256];
  std::snprintf(text, sizeof text,
                "stopped at step %d: the loss scale decayed to %g (%s) after consecutive steps "
                "with Inf/NaN gradients; GradScaler has no floor, and a scale of 0 or a "
                "subnormal scale can never recover",
                step, static_cast<double>(scale), scale == 0.0f ? "zero" : "subnormal");
  return std::string(text);
}

namespace {

// n draws uniform in [-a, a) from tcbench's one random source (numerics/random.hpp).
std::vector<float> uniform(std::size_t n, float a, RandomStream& rng) {
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(-a, a);
  return v;
}

// C (m x n) = op(A) op(B), column-major, op(A) m x k, op(B) k x n; FP32 accumulation in k order
// (the order differs from a tensor core's, the precision does not).
void gemm(int m, int n, int k, const std::vector<float>& a, bool trans_a,
          const std::vector<float>& b, bool trans_b, std::vector<float>& c) {
  c.assign(static_cast<std::size_t>(m) * n, 0.0f);
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < m; ++i) {
      float acc = 0.0f;
      for (int l = 0; l < k; ++l) {
        const float av = trans_a ? a[static_cast<std::size_t>(l) + static_cast<std::size_t>(i) * k]
                                 : a[static_cast<std::size_t>(i) + static_cast<std::size_t>(l) * m];
        const float bv = trans_b ? b[static_cast<std::size_t>(j) + static_cast<std::size_t>(l) * n]
                                 : b[static_cast<std::size_t>(l) + static_cast<std::size_t>(j) * k];
        acc += av * bv;
      }
      c[static_cast<std::size_t>(i) + static_cast<std::size_t>(j) * m] = acc;
    }
}

// The state and tensors of one run; step() is one iteration.
class HostTrainer {
 public:
  HostTrainer(const TrainingConfig& cfg, TrainingMode mode)
      : cfg_(cfg), storage_(storage_of(mode)), scaling_(cfg, mode) {
    cfg.validate();
    RegressionData d = make_regression_data(cfg);
    x_ = store(d.x);
    t_ = std::move(d.t);
    if (cfg.poison_targets) std::fill(t_.begin(), t_.end(), NAN);
    w1_ = std::move(d.w1);
    w2_ = std::move(d.w2);
    m1_.assign(w1_.size(), 0.0f);
    v1_.assign(w1_.size(), 0.0f);
    m2_.assign(w2_.size(), 0.0f);
    v2_.assign(w2_.size(), 0.0f);
  }

  float scale() const { return scaling_.scale(); }

  TrainingStep step() {
    const int b = cfg_.batch, in = cfg_.inputs, hid = cfg_.hidden, out = cfg_.outputs;
    TrainingStep rec{};
    rec.scale_used = scaling_.scale();
    // Forward: weights cast each step; GEMM outputs stored in the narrow format.
    const std::vector<float> w1s = store(w1_), w2s = store(w2_);
    gemm(hid, b, in, w1s, false, x_, false, z_);
    for (float& v : z_) v = store_as(v, storage_);
    h_.resize(z_.size());
    for (std::size_t i = 0; i < z_.size(); ++i) h_[i] = store_as(tanh_forward(z_[i]), storage_);
    gemm(out, b, hid, w2s, false, h_, false, y_);
    for (float& v : y_) v = store_as(cfg_.target_scale * v, storage_);  // the output gain
    double sum = 0.0;
    for (std::size_t i = 0; i < y_.size(); ++i) sum += squared_error(y_[i], t_[i]);
    rec.loss = static_cast<float>(sum / static_cast<double>(y_.size()));

    // Backward on the scaled loss; every gradient tensor is stored (and tallied).
    const float coef = scaled_mse_coef(rec.scale_used, y_.size());
    dy_.resize(y_.size());
    for (std::size_t i = 0; i < y_.size(); ++i)
      dy_[i] = store_gradient(scaled_mse_gradient(y_[i], t_[i], coef), rec.tally);
    gemm(out, hid, b, dy_, false, h_, true, dw2_);
    for (float& v : dw2_) v = store_gradient(cfg_.target_scale * v, rec.tally);
    gemm(hid, b, out, w2s, true, dy_, false, dh_);
    for (float& v : dh_) v = store_gradient(cfg_.target_scale * v, rec.tally);
    dz_.resize(dh_.size());
    for (std::size_t i = 0; i < dh_.size(); ++i)
      dz_[i] = store_gradient(tanh_backward(dh_[i], h_[i]), rec.tally);
    gemm(hid, in, b, dz_, false, x_, true, dw1_);
    for (float& v : dw1_) v = store_gradient(v, rec.tally);

    // Master gradients: unscaled in FP32 and checked, then the step is taken or skipped.
    const float inv = inverse_scale(rec.scale_used);
    bool found_inf = false;
    for (float& g : dw1_) g = check_and_unscale(g, inv, found_inf);
    for (float& g : dw2_) g = check_and_unscale(g, inv, found_inf);
    rec.skipped = scaling_.skip(found_inf);
    if (!rec.skipped) adam_step();
    return rec;
  }

  // The gradients of the last step, concatenated (before unscaling they equal the FP32 ones
  // when the mode is fp32: scale 1).
  void append_gradients(std::vector<float>& out) const {
    for (const auto* t : {&dy_, &dh_, &dz_, &dw2_, &dw1_})
      out.insert(out.end(), t->begin(), t->end());
  }

 private:
  std::vector<float> store(const std::vector<float>& v) const {
    std::vector<float> s(v.size());
    for (std::size_t i = 0; i < v.size(); ++i) s[i] = store_as(v[i], storage_);
    return s;
  }
  float store_gradient(float v, GradientTally& tally) const {
    const float s = store_as(v, storage_);
    add_outcome(tally, store_outcome(v, s));
    return s;
  }
  void adam_step() {
    const AdamConstants c = adam_constants(cfg_, ++adam_t_);
    for (std::size_t i = 0; i < w1_.size(); ++i) adam_update(w1_[i], m1_[i], v1_[i], dw1_[i], c);
    for (std::size_t i = 0; i < w2_.size(); ++i) adam_update(w2_[i], m2_[i], v2_[i], dw2_[i], c);
  }

  TrainingConfig cfg_;
  Storage storage_;
  ModeScaler scaling_;
  int adam_t_ = 0;  // optimizer steps actually taken (a skipped step does not count, as in PyTorch)
  std::vector<float> x_, t_, w1_, w2_, m1_, v1_, m2_, v2_;
  std::vector<float> z_, h_, y_, dy_, dw2_, dh_, dz_, dw1_;
};

}  // namespace

AdamConstants adam_constants(const TrainingConfig& cfg, int t) {
  const double b1t = std::pow(static_cast<double>(cfg.beta1), t);
  const double b2t = std::pow(static_cast<double>(cfg.beta2), t);
  return AdamConstants{cfg.beta1, cfg.beta2, cfg.eps,
                       static_cast<float>(cfg.learning_rate / (1.0 - b1t)),
                       static_cast<float>(std::sqrt(1.0 - b2t))};
}

ModeScaler::ModeScaler(const TrainingConfig& cfg, TrainingMode mode) {
  if (mode == TrainingMode::fp16_static) static_.emplace(cfg.static_scale);
  if (mode == TrainingMode::fp16_dynamic) dynamic_.emplace(cfg.dynamic);
}
float ModeScaler::scale() const {
  if (static_) return static_->scale();
  if (dynamic_) return dynamic_->scale();
  return 1.0f;
}
bool ModeScaler::skip(bool found_inf) {
  if (static_) return static_->update(found_inf).skipped;
  if (dynamic_) return dynamic_->update(found_inf).skipped;
  return false;
}

RegressionData make_regression_data(const TrainingConfig& cfg) {
  cfg.validate();
  RandomStream rng(cfg.seed);
  const auto b = static_cast<std::size_t>(cfg.batch), in = static_cast<std::size_t>(cfg.inputs),
             hid = static_cast<std::size_t>(cfg.hidden),
             out = static_cast<std::size_t>(cfg.outputs);
  // Uniform(-a, a) has variance a^2 / 3: a = sqrt(3 / fan_in) keeps pre-activations ~ N(0, 1).
  const float a_in = std::sqrt(3.0f / static_cast<float>(in));
  const float a_hid = std::sqrt(3.0f / static_cast<float>(hid));
  RegressionData d;
  d.x = uniform(in * b, 1.0f, rng);
  if (!cfg.teacher_targets) {
    d.t = uniform(out * b, cfg.target_scale, rng);
    d.w1 = uniform(hid * in, a_in, rng);
    d.w2 = uniform(out * hid, a_hid, rng);
    return d;
  }
  const std::vector<float> v1 = uniform(hid * in, 2.0f * a_in, rng);
  const std::vector<float> v2 = uniform(out * hid, a_hid, rng);
  // Teacher in FP64, so the targets carry no FP32 rounding of their own.
  d.t.assign(out * b, 0.0f);
  for (std::size_t j = 0; j < b; ++j) {
    std::vector<double> h(hid);
    for (std::size_t i = 0; i < hid; ++i) {
      double z = 0;
      for (std::size_t l = 0; l < in; ++l) z += double{v1[i + l * hid]} * d.x[l + j * in];
      h[i] = std::tanh(z);
    }
    for (std::size_t o = 0; o < out; ++o) {
      double y = 0;
      for (std::size_t i = 0; i < hid; ++i) y += double{v2[o + i * out]} * h[i];
      d.t[o + j * out] = static_cast<float>(cfg.target_scale * y);
    }
  }
  d.w1 = uniform(hid * in, a_in, rng);
  d.w2 = uniform(out * hid, a_hid, rng);
  return d;
}

TrainingRun train_host(const TrainingConfig& cfg, TrainingMode mode) {
  HostTrainer trainer(cfg, mode);
  TrainingRun run;
  run.mode = mode;
  run.steps.reserve(static_cast<std::size_t>(cfg.steps));
  for (int s = 0; s < cfg.steps; ++s) {
    run.steps.push_back(trainer.step());
    if ((run.stopped = unusable_scale_reason(trainer.scale(), s + 1))) break;
  }
  return run;
}

std::vector<float> fp32_backward_gradients(const TrainingConfig& cfg,
                                           std::span<const int> at_steps) {
  HostTrainer trainer(cfg, TrainingMode::fp32);
  std::vector<float> grads;
  const int last = at_steps.empty() ? 0 : *std::max_element(at_steps.begin(), at_steps.end());
  for (int s = 0; s <= last; ++s) {
    trainer.step();
    if (std::find(at_steps.begin(), at_steps.end(), s) != at_steps.end())
      trainer.append_gradients(grads);
  }
  return grads;
}

}  // namespace tcbench::studies
