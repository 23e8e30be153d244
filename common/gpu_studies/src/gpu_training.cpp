// The mixed-precision training loop on the GPU (gpu_training.hpp).
//
// Per step, with T the mode's storage type (float, __half or __nv_bfloat16):
//   forward    W1s, W2s = T(W1), T(W2)     cast of the FP32 master weights
//              Z = W1s X   (cuBLASLt, D in T)   H = T(tanh(Z))
//              Y = a W2s H (cuBLASLt, D in T)   a = target_scale, the output gain
//              dY = T(S * 2 (Y - T) / N), loss = mean (Y - T)^2 (FP32, reduced in FP64)
//   backward   dW2 = T(a dY H^T) (cuBLASLt, D in FP32, then rounded to T in place: the FP32 value
//              dH  = T(a W2s^T dY)  is what a T-output GEMM rounds, so the kernel sees what
//              dZ = T(tanh'(dH))    underflowed)        dW1 = T(dZ X^T)
//   unscale    master gradients [dW1 | dW2] unscaled and checked by MultiTensorUnscale; the
//              scaler decides
//   optimizer  Adam updates the FP32 masters unless the step is skipped.
// The host reads the Inf/NaN flag and the tallies once per step (the records need them; PyTorch
// avoids that synchronization by keeping the scale on the device).
#include "tcbench/studies/gpu_training.hpp"

#include "tcbench/cuda_owners.hpp"
#include "tcbench/error.hpp"
#include "tcbench/gemm_types.hpp"
#include "tcbench/kernels/loss_scaling.hpp"
#include "tcbench/kernels/training_step.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <chrono>
#include <cmath>
#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace tcbench::studies {
namespace {

namespace tk = tcbench::kernels;

GemmSpec training_gemm(std::int64_t m, std::int64_t n, std::int64_t k, cudaDataType_t in,
                       cudaDataType_t out, bool trans_a, bool trans_b,
                       GpuMath math = GpuMath::standard) {
  GemmSpec s;
  s.problem.m = m;
  s.problem.n = n;
  s.problem.k = k;
  s.problem.trans_a = trans_a;
  s.problem.trans_b = trans_b;
  s.a_type = s.b_type = in;
  s.c_type = s.d_type = out;
  // The FP32 reference stays FP32 FFMA (PEDANTIC: no TF32 through math-mode settings) unless
  // TF32 is asked for by name.
  if (in == CUDA_R_32F)
    s.compute_type =
        math == GpuMath::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32 : CUBLAS_COMPUTE_32F_PEDANTIC;
  else
    s.compute_type = CUBLAS_COMPUTE_32F;
  s.scale_type = CUDA_R_32F;
  return s;
}

// A device buffer filled with 0xFF bytes (NaN in every float format): anything a kernel fails to
// write shows up as NaN instead of a plausible number.
template <typename T>
DeviceBuffer<T> poisoned(std::size_t n, cudaStream_t stream) {
  DeviceBuffer<T> b(n);
  TCB_CUDA(cudaMemsetAsync(b.get(), 0xFF, b.bytes(), stream));
  return b;
}

template <typename T>
T to_storage(float v) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(v);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(v);
  } else {
    return v;
  }
}

cudaDataType_t storage_type(TrainingMode mode) {
  return numerics::element_info(storage_of(mode)).cuda;
}

std::size_t storage_bytes(TrainingMode mode) {
  return static_cast<std::size_t>(numerics::element_bytes(numerics::element(storage_of(mode))));
}

void check_math(TrainingMode mode, GpuMath math) {
  if (math == GpuMath::tf32 && storage_of(mode) != numerics::Storage::fp32)
    throw InvalidArgument("TF32 GEMMs are an FP32-storage option; mode " + std::string(name(mode)) +
                          " stores " + data_type_name(storage_type(mode)));
}

// Calls the observer (when there is one) around one phase.
class PhaseScope {
 public:
  PhaseScope(PhaseObserver* o, StepPhase p, cudaStream_t s) : o_(o), p_(p), s_(s) {
    if (o_) o_->begin(p_, s_);
  }
  PhaseScope(const PhaseScope&) = delete;
  PhaseScope& operator=(const PhaseScope&) = delete;
  // Not told on the way out of an exception: the step is abandoned, not ended.
  void end() {
    if (o_) o_->end(p_, s_);
  }

 private:
  PhaseObserver* o_;
  StepPhase p_;
  cudaStream_t s_;
};

}  // namespace

class GpuTrainer::Impl {
 public:
  virtual ~Impl() = default;
  virtual TrainingStep step(PhaseObserver* observer) = 0;
  virtual void run_gemms(cudaStream_t stream) const = 0;
  virtual float scale() const = 0;
  virtual const std::string& gemm_impl() const = 0;
};

namespace {

template <typename T>
class TypedTrainer final : public GpuTrainer::Impl {
 public:
  TypedTrainer(const LtHandle& lt, int cc_major, int cc_minor, const TrainingConfig& cfg,
               TrainingMode mode, cudaStream_t stream, GpuMath math)
      : cfg_(cfg),
        mode_(mode),
        stream_(stream),
        scaler_(cfg, mode),
        b_(static_cast<std::size_t>(cfg.batch)),
        in_(static_cast<std::size_t>(cfg.inputs)),
        hid_(static_cast<std::size_t>(cfg.hidden)),
        out_(static_cast<std::size_t>(cfg.outputs)),
        x_(in_ * b_),
        t_(out_ * b_),
        w_(hid_ * in_ + out_ * hid_),
        m_(w_.size()),
        v_(w_.size()),
        grads_(poisoned<float>(w_.size(), stream)),
        ws_(poisoned<T>(w_.size(), stream)),
        z_(poisoned<T>(hid_ * b_, stream)),
        h_(poisoned<T>(hid_ * b_, stream)),
        y_(poisoned<T>(out_ * b_, stream)),
        dy_(poisoned<T>(out_ * b_, stream)),
        dz_(poisoned<T>(hid_ * b_, stream)),
        dh_(poisoned<float>(hid_ * b_, stream)),
        tally_(1),
        inv_scale_(1),
        fwd1_(plan(lt, cc_major, cc_minor, hid_, b_, in_, false, false, false, math)),
        fwd2_(plan(lt, cc_major, cc_minor, out_, b_, hid_, false, false, false, math)),
        dw2_(plan(lt, cc_major, cc_minor, out_, hid_, b_, true, false, true, math)),
        dh_plan_(plan(lt, cc_major, cc_minor, hid_, b_, out_, true, true, false, math)),
        dw1_(plan(lt, cc_major, cc_minor, hid_, in_, b_, true, false, true, math)),
        unscale_(master_tensors()) {
    const RegressionData data = make_regression_data(cfg);  // validates cfg
    // Inputs: X stored in T once; targets FP32 (NaN when the config poisons them).
    std::vector<T> x_host(data.x.size());
    for (std::size_t i = 0; i < x_host.size(); ++i) x_host[i] = to_storage<T>(data.x[i]);
    x_.upload(x_host, stream);
    std::vector<float> t_host = data.t;
    if (cfg.poison_targets) t_host.assign(t_host.size(), NAN);
    t_.upload(t_host, stream);
    // FP32 masters and Adam state; master gradients [dW1 | dW2] in one buffer (dW2 starts at
    // hid * in floats, a multiple of 4 for every shape with hid * in % 4 == 0: 128-bit path).
    std::vector<float> masters = data.w1;
    masters.insert(masters.end(), data.w2.begin(), data.w2.end());
    w_.upload(masters, stream);
    TCB_CUDA(cudaMemsetAsync(m_.get(), 0, m_.bytes(), stream));
    TCB_CUDA(cudaMemsetAsync(v_.get(), 0, v_.bytes(), stream));
    gemm_impl_ = fwd1_.selected().impl.impl_name;
    TCB_CUDA(cudaStreamSynchronize(stream));
  }

  TrainingStep step(PhaseObserver* observer) override {
    const cudaStream_t s = stream_;
    TrainingStep rec{};
    rec.scale_used = scaler_.scale();
    float* const g1 = grads_.get();
    float* const g2 = grads_.get() + hid_ * in_;
    const T* const w1s = ws_.get();
    const T* const w2s = ws_.get() + hid_ * in_;
    const float gain = cfg_.target_scale;

    PhaseScope forward(observer, StepPhase::forward, s);
    TCB_CUDA(cudaMemsetAsync(tally_.get(), 0, sizeof(tk::DeviceTally), s));
    tk::cast_weights(w_.get(), ws_.get(), ws_.size(), s);
    fwd1_.run(s, w1s, x_.get(), z_.get(), z_.get());
    tk::tanh_forward(z_.get(), h_.get(), z_.size(), s);
    fwd2_.run(s, w2s, h_.get(), y_.get(), y_.get(), gain);
    tk::loss_gradient(y_.get(), t_.get(), dy_.get(), y_.size(),
                      scaled_mse_coef(rec.scale_used, y_.size()), tally_.get(), s);
    forward.end();

    PhaseScope backward(observer, StepPhase::backward, s);
    dw2_.run(s, dy_.get(), h_.get(), g2, g2, gain);
    tk::store_weight_gradient<T>(g2, out_ * hid_, tally_.get(), s);
    dh_plan_.run(s, w2s, dy_.get(), dh_.get(), dh_.get(), gain);
    tk::tanh_backward(dh_.get(), h_.get(), dz_.get(), dh_.size(), tally_.get(), s);
    dw1_.run(s, dz_.get(), x_.get(), g1, g1);
    tk::store_weight_gradient<T>(g1, hid_ * in_, tally_.get(), s);
    backward.end();

    // The Inf/NaN flag lives in the tally, so one copy per step brings everything back.
    PhaseScope unscale(observer, StepPhase::unscale, s);
    float* const found_inf = reinterpret_cast<float*>(reinterpret_cast<char*>(tally_.get()) +
                                                      offsetof(tk::DeviceTally, found_inf));
    const float inv = inverse_scale(rec.scale_used);
    TCB_CUDA(cudaMemcpyAsync(inv_scale_.get(), &inv, sizeof inv, cudaMemcpyHostToDevice, s));
    unscale_.run(inv_scale_.get(), found_inf, s);
    TCB_CUDA_LAUNCH("training step (" + std::string(name(mode_)) + ")");
    tk::DeviceTally host_tally{};
    TCB_CUDA(
        cudaMemcpyAsync(&host_tally, tally_.get(), sizeof host_tally, cudaMemcpyDeviceToHost, s));
    unscale.end();
    TCB_CUDA(cudaStreamSynchronize(s));

    rec.loss = static_cast<float>(host_tally.loss_sum / static_cast<double>(y_.size()));
    rec.tally = {host_tally.stored, host_tally.flushed, host_tally.non_finite};
    rec.skipped = scaler_.skip(host_tally.found_inf != 0.0f);
    PhaseScope optimizer(observer, StepPhase::optimizer, s);
    if (!rec.skipped)
      tk::adam(w_.get(), m_.get(), v_.get(), grads_.get(), w_.size(),
               adam_constants(cfg_, ++adam_t_), s);
    optimizer.end();
    return rec;
  }

  void run_gemms(cudaStream_t s) const override {
    float* const g1 = grads_.get();
    float* const g2 = grads_.get() + hid_ * in_;
    const T* const w1s = ws_.get();
    const T* const w2s = ws_.get() + hid_ * in_;
    const float gain = cfg_.target_scale;
    fwd1_.run(s, w1s, x_.get(), z_.get(), z_.get());
    fwd2_.run(s, w2s, h_.get(), y_.get(), y_.get(), gain);
    dw2_.run(s, dy_.get(), h_.get(), g2, g2, gain);
    dh_plan_.run(s, w2s, dy_.get(), dh_.get(), dh_.get(), gain);
    dw1_.run(s, dz_.get(), x_.get(), g1, g1);
  }

  float scale() const override { return scaler_.scale(); }
  const std::string& gemm_impl() const override { return gemm_impl_; }

 private:
  // A GEMM of the step: inputs in T, D in T (forward) or FP32 (backward).
  static GemmPlan plan(const LtHandle& lt, int cc_major, int cc_minor, std::size_t m, std::size_t n,
                       std::size_t k, bool fp32_out, bool trans_a, bool trans_b, GpuMath math) {
    const cudaDataType_t type = cuda_data_type_v<T>;
    return GemmPlan(lt,
                    training_gemm(static_cast<std::int64_t>(m), static_cast<std::int64_t>(n),
                                  static_cast<std::int64_t>(k), type, fp32_out ? CUDA_R_32F : type,
                                  trans_a, trans_b, math),
                    cc_major, cc_minor);
  }
  std::vector<tk::GradTensor> master_tensors() const {
    return {{grads_.get(), hid_ * in_}, {grads_.get() + hid_ * in_, out_ * hid_}};
  }

  TrainingConfig cfg_;
  TrainingMode mode_;
  cudaStream_t stream_;
  ModeScaler scaler_;
  std::size_t b_, in_, hid_, out_;
  DeviceBuffer<T> x_;
  DeviceBuffer<float> t_;
  DeviceBuffer<float> w_, m_, v_, grads_;
  DeviceBuffer<T> ws_, z_, h_, y_, dy_, dz_;
  DeviceBuffer<float> dh_;
  DeviceBuffer<tk::DeviceTally> tally_;
  DeviceBuffer<float> inv_scale_;
  GemmPlan fwd1_, fwd2_, dw2_, dh_plan_, dw1_;
  tk::MultiTensorUnscale unscale_;
  std::string gemm_impl_;
  int adam_t_ = 0;
};

std::unique_ptr<GpuTrainer::Impl> make_trainer(const LtHandle& lt, int cc_major, int cc_minor,
                                               const TrainingConfig& cfg, TrainingMode mode,
                                               cudaStream_t stream, GpuMath math) {
  cfg.validate();
  check_math(mode, math);
  switch (storage_of(mode)) {
    case numerics::Storage::fp32:
      return std::make_unique<TypedTrainer<float>>(lt, cc_major, cc_minor, cfg, mode, stream, math);
    case numerics::Storage::fp16:
      return std::make_unique<TypedTrainer<__half>>(lt, cc_major, cc_minor, cfg, mode, stream,
                                                    math);
    case numerics::Storage::bf16:
      return std::make_unique<TypedTrainer<__nv_bfloat16>>(lt, cc_major, cc_minor, cfg, mode,
                                                           stream, math);
  }
  throw InvalidArgument("GpuTrainer: unknown training mode");
}

}  // namespace

GpuTrainer::GpuTrainer(const LtHandle& lt, int cc_major, int cc_minor, const TrainingConfig& cfg,
                       TrainingMode mode, cudaStream_t stream, GpuMath math)
    : impl_(make_trainer(lt, cc_major, cc_minor, cfg, mode, stream, math)) {}
GpuTrainer::GpuTrainer(GpuTrainer&&) noexcept = default;
GpuTrainer& GpuTrainer::operator=(GpuTrainer&&) noexcept = default;
GpuTrainer::~GpuTrainer() = default;

TrainingStep GpuTrainer::step(PhaseObserver* observer) {
  return impl_->step(observer);
}
void GpuTrainer::run_gemms(cudaStream_t stream) const {
  impl_->run_gemms(stream);
}
float GpuTrainer::scale() const {
  return impl_->scale();
}
const std::string& GpuTrainer::gemm_impl() const {
  return impl_->gemm_impl();
}

std::size_t GpuTrainer::device_bytes(const TrainingConfig& cfg, TrainingMode mode) {
  cfg.validate();
  const auto b = static_cast<std::size_t>(cfg.batch), in = static_cast<std::size_t>(cfg.inputs),
             hid = static_cast<std::size_t>(cfg.hidden),
             out = static_cast<std::size_t>(cfg.outputs);
  const std::size_t w = hid * in + out * hid, s = storage_bytes(mode);
  // FP32: masters, Adam's m and v, master gradients, targets, dH. T: cast weights, X, Z, H, dZ,
  // Y, dY.
  return 4 * (4 * w + out * b + hid * b) + s * (w + in * b + 3 * hid * b + 2 * out * b) +
         sizeof(tk::DeviceTally) + sizeof(float);
}

std::optional<std::string> training_unsupported_reason(int cc_major, int cc_minor,
                                                       const TrainingConfig& cfg, TrainingMode mode,
                                                       GpuMath math) {
  if (math == GpuMath::tf32 && storage_of(mode) != numerics::Storage::fp32)
    return "TF32 GEMMs are an FP32-storage option; mode " + std::string(name(mode)) + " is not";
  const cudaDataType_t type = storage_type(mode);
  // The forward GEMM has the mode's input and output types; the others differ only in D (FP32).
  return training_gemm(cfg.hidden, cfg.batch, cfg.inputs, type, type, false, false, math)
      .why_invalid(cc_major, cc_minor);
}

GpuTrainingResult train_on_gpu(const LtHandle& lt, int cc_major, int cc_minor,
                               const TrainingConfig& cfg, TrainingMode mode, cudaStream_t stream,
                               GpuMath math) {
  GpuTrainer trainer(lt, cc_major, cc_minor, cfg, mode, stream, math);
  GpuTrainingResult result;
  result.run.mode = mode;
  result.gemm_impl = trainer.gemm_impl();
  // The clock starts after the first step, which also pays for loading the kernels and
  // cuBLASLt's first call; with a single step, that step is all there is to time.
  auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < cfg.steps; ++step) {
    result.run.steps.push_back(trainer.step());
    if (step == 0 && cfg.steps > 1) {
      TCB_CUDA(cudaStreamSynchronize(stream));
      start = std::chrono::steady_clock::now();
    }
    if ((result.run.stopped = unusable_scale_reason(trainer.scale(), step + 1))) break;
  }
  TCB_CUDA(cudaStreamSynchronize(stream));
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  const std::size_t timed = result.run.steps.size() > 1 ? result.run.steps.size() - 1 : 1;
  result.seconds_per_step = elapsed.count() / static_cast<double>(timed);

  // The five GEMMs alone, once warm, averaged over 20 back-to-back runs.
  Event e0, e1;
  trainer.run_gemms(stream);
  e0.record(stream);
  constexpr int kGemmRuns = 20;
  for (int i = 0; i < kGemmRuns; ++i) trainer.run_gemms(stream);
  e1.record(stream);
  e1.synchronize();
  result.gemm_seconds_per_step = e1.elapsed_ms_since(e0) * 1e-3 / kGemmRuns;
  return result;
}

// ---------------------------------------------------------------------------------------------
// The FP64 reference of the first loss

std::size_t fp64_first_loss_bytes(const TrainingConfig& cfg) {
  cfg.validate();
  const auto b = static_cast<std::size_t>(cfg.batch), in = static_cast<std::size_t>(cfg.inputs),
             hid = static_cast<std::size_t>(cfg.hidden),
             out = static_cast<std::size_t>(cfg.outputs);
  return sizeof(double) * (in * b + hid * in + out * hid + hid * b + out * b);
}

double fp64_first_loss(const LtHandle& lt, int cc_major, int cc_minor, const TrainingConfig& cfg,
                       cudaStream_t stream) {
  const RegressionData data = make_regression_data(cfg);  // validates cfg
  const auto b = static_cast<std::int64_t>(cfg.batch), in = static_cast<std::int64_t>(cfg.inputs),
             hid = static_cast<std::int64_t>(cfg.hidden),
             out = static_cast<std::int64_t>(cfg.outputs);
  const auto to_double = [](const std::vector<float>& v) {
    return std::vector<double>(v.begin(), v.end());
  };
  DeviceBuffer<double> x(data.x.size()), w1(data.w1.size()), w2(data.w2.size());
  x.upload(to_double(data.x), stream);
  w1.upload(to_double(data.w1), stream);
  w2.upload(to_double(data.w2), stream);
  DeviceBuffer<double> z = poisoned<double>(static_cast<std::size_t>(hid * b), stream);
  DeviceBuffer<double> y = poisoned<double>(static_cast<std::size_t>(out * b), stream);
  // Column-major, both operands as stored (NN), like the trainer's forward GEMMs.
  const auto fp64_gemm = [](std::int64_t m, std::int64_t n, std::int64_t k) {
    GemmSpec s = GemmSpec::for_precision(Precision::fp64, m, n, k);
    s.problem.trans_a = s.problem.trans_b = false;
    return s;
  };
  const GemmPlan layer1(lt, fp64_gemm(hid, b, in), cc_major, cc_minor);
  const GemmPlan layer2(lt, fp64_gemm(out, b, hid), cc_major, cc_minor);
  layer1.run(stream, w1.get(), x.get(), z.get(), z.get());
  std::vector<double> h = z.download(stream);
  for (double& v : h) v = std::tanh(v);
  z.upload(h, stream);
  layer2.run(stream, w2.get(), z.get(), y.get(), y.get(), static_cast<double>(cfg.target_scale));
  const std::vector<double> yh = y.download(stream);
  double sum = 0;
  for (std::size_t i = 0; i < yh.size(); ++i) {
    const double r = yh[i] - static_cast<double>(data.t[i]);
    sum += r * r;
  }
  return sum / static_cast<double>(yh.size());
}

}  // namespace tcbench::studies
