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
#include <vector>

namespace tcbench::studies {
namespace {

namespace tk = tcbench::kernels;

GemmSpec training_gemm(std::int64_t m, std::int64_t n, std::int64_t k, cudaDataType_t in,
                       cudaDataType_t out, bool trans_a, bool trans_b) {
  GemmSpec s;
  s.problem.m = m;
  s.problem.n = n;
  s.problem.k = k;
  s.problem.trans_a = trans_a;
  s.problem.trans_b = trans_b;
  s.a_type = s.b_type = in;
  s.c_type = s.d_type = out;
  // The FP32 reference stays FP32 FFMA (PEDANTIC: no TF32 through math-mode settings).
  s.compute_type = in == CUDA_R_32F ? CUBLAS_COMPUTE_32F_PEDANTIC : CUBLAS_COMPUTE_32F;
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

template <typename T>
GpuTrainingResult train(const LtHandle& lt, int cc_major, int cc_minor, const TrainingConfig& cfg,
                        TrainingMode mode, cudaStream_t stream) {
  const RegressionData data = make_regression_data(cfg);  // validates cfg
  ModeScaler scaler(cfg, mode);
  const auto b = static_cast<std::size_t>(cfg.batch), in = static_cast<std::size_t>(cfg.inputs),
             hid = static_cast<std::size_t>(cfg.hidden),
             out = static_cast<std::size_t>(cfg.outputs);
  const cudaDataType_t type = cuda_data_type_v<T>;

  // Inputs: X stored in T once; targets FP32 (NaN when the config poisons them).
  std::vector<T> x_host(data.x.size());
  for (std::size_t i = 0; i < x_host.size(); ++i) x_host[i] = to_storage<T>(data.x[i]);
  std::vector<float> t_host = data.t;
  if (cfg.poison_targets) t_host.assign(t_host.size(), NAN);
  DeviceBuffer<T> x(x_host.size());
  x.upload(x_host, stream);
  DeviceBuffer<float> t(t_host.size());
  t.upload(t_host, stream);

  // FP32 masters and Adam state; master gradients [dW1 | dW2] in one buffer (dW2 starts at
  // hid * in floats, a multiple of 4 for every shape with hid * in % 4 == 0: 128-bit path).
  DeviceBuffer<float> w(hid * in + out * hid), m(w.size()), v(w.size());
  std::vector<float> masters = data.w1;
  masters.insert(masters.end(), data.w2.begin(), data.w2.end());
  w.upload(masters, stream);
  TCB_CUDA(cudaMemsetAsync(m.get(), 0, m.bytes(), stream));
  TCB_CUDA(cudaMemsetAsync(v.get(), 0, v.bytes(), stream));
  DeviceBuffer<float> grads = poisoned<float>(w.size(), stream);
  float* const g1 = grads.get();
  float* const g2 = grads.get() + hid * in;

  DeviceBuffer<T> ws = poisoned<T>(w.size(), stream);
  T* const w1s = ws.get();
  T* const w2s = ws.get() + hid * in;
  DeviceBuffer<T> z = poisoned<T>(hid * b, stream), h = poisoned<T>(hid * b, stream),
                  y = poisoned<T>(out * b, stream), dy = poisoned<T>(out * b, stream),
                  dz = poisoned<T>(hid * b, stream);
  DeviceBuffer<float> dh = poisoned<float>(hid * b, stream);
  DeviceBuffer<tk::DeviceTally> tally(1);
  DeviceBuffer<float> inv_scale(1);
  // The Inf/NaN flag lives in the tally, so one copy per step brings everything back.
  float* const found_inf = reinterpret_cast<float*>(reinterpret_cast<char*>(tally.get()) +
                                                    offsetof(tk::DeviceTally, found_inf));

  const auto ib = static_cast<std::int64_t>(b), ii = static_cast<std::int64_t>(in),
             ih = static_cast<std::int64_t>(hid), io = static_cast<std::int64_t>(out);
  const GemmPlan fwd1(lt, training_gemm(ih, ib, ii, type, type, false, false), cc_major, cc_minor);
  const GemmPlan fwd2(lt, training_gemm(io, ib, ih, type, type, false, false), cc_major, cc_minor);
  const GemmPlan dw2_plan(lt, training_gemm(io, ih, ib, type, CUDA_R_32F, false, true), cc_major,
                          cc_minor);
  const GemmPlan dh_plan(lt, training_gemm(ih, ib, io, type, CUDA_R_32F, true, false), cc_major,
                         cc_minor);
  const GemmPlan dw1_plan(lt, training_gemm(ih, ii, ib, type, CUDA_R_32F, false, true), cc_major,
                          cc_minor);
  const float gain = cfg.target_scale;
  const tk::GradTensor master[] = {{g1, hid * in}, {g2, out * hid}};
  const tk::MultiTensorUnscale unscale(master);

  // The phases of one step, in order.
  const auto forward = [&](float scale, cudaStream_t s) {
    tk::cast_weights(w.get(), ws.get(), ws.size(), s);
    fwd1.run(s, w1s, x.get(), z.get(), z.get());
    tk::tanh_forward(z.get(), h.get(), z.size(), s);
    fwd2.run(s, w2s, h.get(), y.get(), y.get(), gain);
    tk::loss_gradient(y.get(), t.get(), dy.get(), y.size(), scaled_mse_coef(scale, y.size()),
                      tally.get(), s);
  };
  const auto backward = [&](cudaStream_t s) {
    dw2_plan.run(s, dy.get(), h.get(), g2, g2, gain);
    tk::store_weight_gradient<T>(g2, out * hid, tally.get(), s);
    dh_plan.run(s, w2s, dy.get(), dh.get(), dh.get(), gain);
    tk::tanh_backward(dh.get(), h.get(), dz.get(), dh.size(), tally.get(), s);
    dw1_plan.run(s, dz.get(), x.get(), g1, g1);
    tk::store_weight_gradient<T>(g1, hid * in, tally.get(), s);
  };
  const auto gemms = [&](cudaStream_t s) {
    fwd1.run(s, w1s, x.get(), z.get(), z.get());
    fwd2.run(s, w2s, h.get(), y.get(), y.get(), gain);
    dw2_plan.run(s, dy.get(), h.get(), g2, g2, gain);
    dh_plan.run(s, w2s, dy.get(), dh.get(), dh.get(), gain);
    dw1_plan.run(s, dz.get(), x.get(), g1, g1);
  };

  GpuTrainingResult result;
  result.run.mode = mode;
  result.gemm_impl = fwd1.selected().impl.impl_name;
  int adam_t = 0;
  TCB_CUDA(cudaStreamSynchronize(stream));
  // The clock starts after the first step, which also pays for loading the kernels and
  // cuBLASLt's first call; with a single step, that step is all there is to time.
  auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < cfg.steps; ++step) {
    TrainingStep rec{};
    rec.scale_used = scaler.scale();
    TCB_CUDA(cudaMemsetAsync(tally.get(), 0, sizeof(tk::DeviceTally), stream));
    forward(rec.scale_used, stream);
    backward(stream);
    const float inv = inverse_scale(rec.scale_used);
    TCB_CUDA(cudaMemcpyAsync(inv_scale.get(), &inv, sizeof inv, cudaMemcpyHostToDevice, stream));
    unscale.run(inv_scale.get(), found_inf, stream);
    TCB_CUDA_LAUNCH("training step " + std::to_string(step) + " (" + std::string(name(mode)) + ")");
    tk::DeviceTally host_tally{};
    TCB_CUDA(cudaMemcpyAsync(&host_tally, tally.get(), sizeof host_tally, cudaMemcpyDeviceToHost,
                             stream));
    TCB_CUDA(cudaStreamSynchronize(stream));

    rec.loss = static_cast<float>(host_tally.loss_sum / static_cast<double>(y.size()));
    rec.tally = {host_tally.stored, host_tally.flushed, host_tally.non_finite};
    rec.skipped = scaler.skip(host_tally.found_inf != 0.0f);
    if (!rec.skipped)
      tk::adam(w.get(), m.get(), v.get(), grads.get(), w.size(), adam_constants(cfg, ++adam_t),
               stream);
    result.run.steps.push_back(rec);
    if (step == 0 && cfg.steps > 1) {
      TCB_CUDA(cudaStreamSynchronize(stream));
      start = std::chrono::steady_clock::now();
    }
    if ((result.run.stopped = unusable_scale_reason(scaler.scale(), step + 1))) break;
  }
  TCB_CUDA(cudaStreamSynchronize(stream));
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  const std::size_t timed = result.run.steps.size() > 1 ? result.run.steps.size() - 1 : 1;
  result.seconds_per_step = elapsed.count() / static_cast<double>(timed);

  // The five GEMMs alone, once warm, averaged over 20 back-to-back runs.
  Event e0, e1;
  gemms(stream);
  e0.record(stream);
  constexpr int kGemmRuns = 20;
  for (int i = 0; i < kGemmRuns; ++i) gemms(stream);
  e1.record(stream);
  e1.synchronize();
  result.gemm_seconds_per_step = e1.elapsed_ms_since(e0) * 1e-3 / kGemmRuns;
  return result;
}

cudaDataType_t storage_type(TrainingMode mode) {
  switch (storage_of(mode)) {
    case numerics::Storage::fp16:
      return CUDA_R_16F;
    case numerics::Storage::bf16:
      return CUDA_R_16BF;
    case numerics::Storage::fp32:
      break;
  }
  return CUDA_R_32F;
}

}  // namespace

std::optional<std::string> training_unsupported_reason(int cc_major, int cc_minor,
                                                       const TrainingConfig& cfg,
                                                       TrainingMode mode) {
  const cudaDataType_t type = storage_type(mode);
  // The forward GEMM has the mode's input and output types; the others differ only in D (FP32).
  return training_gemm(cfg.hidden, cfg.batch, cfg.inputs, type, type, false, false)
      .why_invalid(cc_major, cc_minor);
}

GpuTrainingResult train_on_gpu(const LtHandle& lt, int cc_major, int cc_minor,
                               const TrainingConfig& cfg, TrainingMode mode, cudaStream_t stream) {
  switch (storage_of(mode)) {
    case numerics::Storage::fp32:
      return train<float>(lt, cc_major, cc_minor, cfg, mode, stream);
    case numerics::Storage::fp16:
      return train<__half>(lt, cc_major, cc_minor, cfg, mode, stream);
    case numerics::Storage::bf16:
      return train<__nv_bfloat16>(lt, cc_major, cc_minor, cfg, mode, stream);
  }
  throw InvalidArgument("train_on_gpu: unknown training mode");
}

}  // namespace tcbench::studies
