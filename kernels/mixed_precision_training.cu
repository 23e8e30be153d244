// The mixed-precision training run on the GPU: element-wise kernels (thin loops around the
// TCB_HD functions of tcbench/numerics/mixed_precision_training.hpp that the host trainer runs),
// cuBLASLt GEMMs, and the step loop.
//
// Per step, with T the mode's storage type (float, __half or __nv_bfloat16):
//   W1s, W2s = T(W1), T(W2)                         cast of the FP32 master weights
//   Z = W1s X            (cuBLASLt, D in T)         H = T(tanh(Z))
//   Y = a W2s H          (cuBLASLt, D in T)         a = target_scale, the output gain
//   dY = T(S * 2 (Y - T) / N), loss = mean (Y - T)^2 (FP32, reduced in FP64)
//   dW2 = T(a dY H^T)    (cuBLASLt, D in FP32, then rounded to T in place: the FP32 value is
//   dH  = T(a W2s^T dY)   what a T-output GEMM rounds, so the kernel can see what underflowed)
//   dZ = T(tanh'(dH))    dW1 = T(dZ X^T)
//   master gradients [dW1 | dW2] unscaled and checked by MultiTensorUnscale; the scaler decides;
//   Adam updates the FP32 masters unless the step is skipped.
// The host reads the Inf/NaN flag and the tallies once per step (the records need them; PyTorch
// avoids that synchronization by keeping the scale on the device).
#include "tcbench/error.hpp"
#include "tcbench/kernels/loss_scaling.hpp"
#include "tcbench/kernels/mixed_precision_training.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <string>
#include <type_traits>
#include <vector>

namespace tcbench::kernels {
namespace {

namespace tn = tcbench::numerics;

template <typename T>
struct StorageOf;
template <>
struct StorageOf<float> {
  static constexpr tn::Storage storage = tn::Storage::fp32;
  static constexpr cudaDataType_t type = CUDA_R_32F;
};
template <>
struct StorageOf<__half> {
  static constexpr tn::Storage storage = tn::Storage::fp16;
  static constexpr cudaDataType_t type = CUDA_R_16F;
};
template <>
struct StorageOf<__nv_bfloat16> {
  static constexpr tn::Storage storage = tn::Storage::bf16;
  static constexpr cudaDataType_t type = CUDA_R_16BF;
};

__device__ inline float to_float(float v) {
  return v;
}
__device__ inline float to_float(__half v) {
  return __half2float(v);
}
__device__ inline float to_float(__nv_bfloat16 v) {
  return __bfloat162float(v);
}
// `stored` is already a value of T (store_as produced it), so the conversion is exact.
template <typename T>
__device__ inline T as_storage(float stored) {
  if constexpr (std::is_same_v<T, __half>) {
    return __float2half_rn(stored);
  } else if constexpr (std::is_same_v<T, __nv_bfloat16>) {
    return __float2bfloat16_rn(stored);
  } else {
    return stored;
  }
}

// What one step's kernels accumulate; read by the host after the step.
struct DeviceTally {
  unsigned long long stored, flushed, non_finite;
  double loss_sum;
  float found_inf;  // written by the check-and-unscale kernel
};

constexpr int kThreads = 256;

// Warp sums, then one atomic per warp. Every thread of the block must call it (no early exit).
__device__ void add_to_tally(DeviceTally* t, unsigned long long stored, unsigned long long flushed,
                             unsigned long long non_finite, double loss) {
  for (int offset = 16; offset > 0; offset /= 2) {
    stored += __shfl_down_sync(0xffffffffu, stored, offset);
    flushed += __shfl_down_sync(0xffffffffu, flushed, offset);
    non_finite += __shfl_down_sync(0xffffffffu, non_finite, offset);
    loss += __shfl_down_sync(0xffffffffu, loss, offset);
  }
  if ((threadIdx.x & 31) == 0) {
    if (stored) atomicAdd(&t->stored, stored);
    if (flushed) atomicAdd(&t->flushed, flushed);
    if (non_finite) atomicAdd(&t->non_finite, non_finite);
    if (loss != 0.0) atomicAdd(&t->loss_sum, loss);
  }
}

struct Outcomes {
  unsigned long long stored = 0, flushed = 0, non_finite = 0;
  __device__ void add(unsigned bits) {
    ++stored;
    flushed += bits & tn::kFlushedBit;
    non_finite += (bits & tn::kNonFiniteBit) >> 1;
  }
};

#define TCB_GRID_STRIDE(i, n)                                                                    \
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < (n); \
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)

template <typename T>
__global__ void __launch_bounds__(kThreads)
    cast_weights_kernel(const float* __restrict__ w, T* __restrict__ ws, std::size_t n) {
  TCB_GRID_STRIDE(i, n) ws[i] = as_storage<T>(tn::store_as(w[i], StorageOf<T>::storage));
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    tanh_forward_kernel(const T* __restrict__ z, T* __restrict__ h, std::size_t n) {
  TCB_GRID_STRIDE(i, n) {
    h[i] = as_storage<T>(tn::store_as(tn::tanh_forward(to_float(z[i])), StorageOf<T>::storage));
  }
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    loss_gradient_kernel(const T* __restrict__ y, const float* __restrict__ t, T* __restrict__ dy,
                         std::size_t n, float coef, DeviceTally* tally) {
  Outcomes o;
  double loss = 0;
  TCB_GRID_STRIDE(i, n) {
    const float yi = to_float(y[i]);
    loss += tn::squared_error(yi, t[i]);
    const float g = tn::scaled_mse_gradient(yi, t[i], coef);
    const float s = tn::store_as(g, StorageOf<T>::storage);
    o.add(tn::store_outcome(g, s));
    dy[i] = as_storage<T>(s);
  }
  add_to_tally(tally, o.stored, o.flushed, o.non_finite, loss);
}

// Weight gradients: the GEMM wrote FP32 into the master-gradient buffer; round to the storage
// format in place (what a T-output GEMM stores) and count what was lost.
template <typename T>
__global__ void __launch_bounds__(kThreads)
    store_weight_gradient_kernel(float* __restrict__ g, std::size_t n, DeviceTally* tally) {
  Outcomes o;
  TCB_GRID_STRIDE(i, n) {
    const float s = tn::store_as(g[i], StorageOf<T>::storage);
    o.add(tn::store_outcome(g[i], s));
    g[i] = s;
  }
  add_to_tally(tally, o.stored, o.flushed, o.non_finite, 0.0);
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    tanh_backward_kernel(const float* __restrict__ dh_fp32, const T* __restrict__ h,
                         T* __restrict__ dz, std::size_t n, DeviceTally* tally) {
  Outcomes o;
  TCB_GRID_STRIDE(i, n) {
    const float dh = tn::store_as(dh_fp32[i], StorageOf<T>::storage);
    o.add(tn::store_outcome(dh_fp32[i], dh));
    const float d = tn::tanh_backward(dh, to_float(h[i]));
    const float s = tn::store_as(d, StorageOf<T>::storage);
    o.add(tn::store_outcome(d, s));
    dz[i] = as_storage<T>(s);
  }
  add_to_tally(tally, o.stored, o.flushed, o.non_finite, 0.0);
}

__global__ void __launch_bounds__(kThreads)
    adam_kernel(float* __restrict__ p, float* __restrict__ m, float* __restrict__ v,
                const float* __restrict__ g, std::size_t n, tn::AdamConstants c) {
  TCB_GRID_STRIDE(i, n) tn::adam_update(p[i], m[i], v[i], g[i], c);
}

unsigned blocks_for(std::size_t n) {
  return static_cast<unsigned>(std::min<std::size_t>((n + kThreads - 1) / kThreads, 1024));
}

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
GpuTrainingResult train(const LtHandle& lt, int cc_major, int cc_minor,
                        const tn::TrainingConfig& cfg, tn::TrainingMode mode, cudaStream_t stream) {
  const tn::RegressionData data = tn::make_regression_data(cfg);  // validates cfg
  tn::ModeScaler scaler(cfg, mode);
  const auto b = static_cast<std::size_t>(cfg.batch), in = static_cast<std::size_t>(cfg.inputs),
             hid = static_cast<std::size_t>(cfg.hidden),
             out = static_cast<std::size_t>(cfg.outputs);
  const cudaDataType_t type = StorageOf<T>::type;

  // Inputs: X stored in T once; targets FP32 (NaN when the config poisons them).
  std::vector<T> x_host(data.x.size());
  for (std::size_t i = 0; i < x_host.size(); ++i) {
    if constexpr (std::is_same_v<T, float>) {
      x_host[i] = data.x[i];
    } else if constexpr (std::is_same_v<T, __half>) {
      x_host[i] = __float2half_rn(data.x[i]);
    } else {
      x_host[i] = __float2bfloat16_rn(data.x[i]);
    }
  }
  std::vector<float> t_host = data.t;
  if (cfg.poison_targets) t_host.assign(t_host.size(), NAN);
  DeviceBuffer<T> x(x_host.size());
  x.upload(x_host, stream);
  DeviceBuffer<float> t(t_host.size());
  t.upload(t_host, stream);

  // FP32 masters and Adam state; master gradients [dW1 | dW2] in one buffer (dW2 starts at
  // hid * in floats, a multiple of 4 for every shape with hid * in % 4 == 0: 128-bit path).
  DeviceBuffer<float> w(hid * in + out * hid), m(w.size()), v(w.size());
  w.upload(
      [&] {
        std::vector<float> all = data.w1;
        all.insert(all.end(), data.w2.begin(), data.w2.end());
        return all;
      }(),
      stream);
  TCB_CUDA(cudaMemsetAsync(m.get(), 0, m.bytes(), stream));
  TCB_CUDA(cudaMemsetAsync(v.get(), 0, v.bytes(), stream));
  float* const w1 = w.get();
  float* const w2 = w.get() + hid * in;
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
  DeviceBuffer<DeviceTally> tally(1);
  DeviceBuffer<float> inv_scale(1);
  // The Inf/NaN flag lives in the tally, so one copy per step brings everything back.
  float* const found_inf = reinterpret_cast<float*>(reinterpret_cast<char*>(tally.get()) +
                                                    offsetof(DeviceTally, found_inf));

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
  auto gemms = [&](cudaStream_t s) {
    fwd1.run(s, w1s, x.get(), z.get(), z.get());
    fwd2.run(s, w2s, h.get(), y.get(), y.get(), gain);
    dw2_plan.run(s, dy.get(), h.get(), g2, g2, gain);
    dh_plan.run(s, w2s, dy.get(), dh.get(), dh.get(), gain);
    dw1_plan.run(s, dz.get(), x.get(), g1, g1);
  };

  const GradTensor master[] = {{g1, hid * in}, {g2, out * hid}};
  const MultiTensorUnscale unscale(master);

  GpuTrainingResult result;
  result.run.mode = mode;
  result.gemm_impl = fwd1.selected().impl.impl_name;
  int adam_t = 0;
  TCB_CUDA(cudaStreamSynchronize(stream));
  // The clock starts after the first step, which also pays for loading the kernels and
  // cuBLASLt's first call; with a single step, that step is all there is to time.
  auto start = std::chrono::steady_clock::now();
  for (int step = 0; step < cfg.steps; ++step) {
    tn::TrainingStep rec{};
    rec.scale_used = scaler.scale();
    TCB_CUDA(cudaMemsetAsync(tally.get(), 0, sizeof(DeviceTally), stream));
    cast_weights_kernel<T>
        <<<blocks_for(ws.size()), kThreads, 0, stream>>>(w.get(), ws.get(), ws.size());
    fwd1.run(stream, w1s, x.get(), z.get(), z.get());
    tanh_forward_kernel<T>
        <<<blocks_for(z.size()), kThreads, 0, stream>>>(z.get(), h.get(), z.size());
    fwd2.run(stream, w2s, h.get(), y.get(), y.get(), gain);
    loss_gradient_kernel<T><<<blocks_for(y.size()), kThreads, 0, stream>>>(
        y.get(), t.get(), dy.get(), y.size(), tn::scaled_mse_coef(rec.scale_used, y.size()),
        tally.get());
    dw2_plan.run(stream, dy.get(), h.get(), g2, g2, gain);
    store_weight_gradient_kernel<T>
        <<<blocks_for(out * hid), kThreads, 0, stream>>>(g2, out * hid, tally.get());
    dh_plan.run(stream, w2s, dy.get(), dh.get(), dh.get(), gain);
    tanh_backward_kernel<T><<<blocks_for(dh.size()), kThreads, 0, stream>>>(
        dh.get(), h.get(), dz.get(), dh.size(), tally.get());
    dw1_plan.run(stream, dz.get(), x.get(), g1, g1);
    store_weight_gradient_kernel<T>
        <<<blocks_for(hid * in), kThreads, 0, stream>>>(g1, hid * in, tally.get());
    const float inv = tn::inverse_scale(rec.scale_used);
    TCB_CUDA(cudaMemcpyAsync(inv_scale.get(), &inv, sizeof inv, cudaMemcpyHostToDevice, stream));
    unscale.run(inv_scale.get(), found_inf, stream);
    TCB_CUDA_LAUNCH("training step " + std::to_string(step) + " (" + std::string(tn::name(mode)) +
                    ")");
    DeviceTally host_tally{};
    TCB_CUDA(cudaMemcpyAsync(&host_tally, tally.get(), sizeof host_tally, cudaMemcpyDeviceToHost,
                             stream));
    TCB_CUDA(cudaStreamSynchronize(stream));

    rec.loss = static_cast<float>(host_tally.loss_sum / static_cast<double>(y.size()));
    rec.tally = {host_tally.stored, host_tally.flushed, host_tally.non_finite};
    rec.skipped = scaler.skip(host_tally.found_inf != 0.0f);
    if (!rec.skipped) {
      adam_kernel<<<blocks_for(w.size()), kThreads, 0, stream>>>(
          w.get(), m.get(), v.get(), grads.get(), w.size(), tn::adam_constants(cfg, ++adam_t));
      TCB_CUDA_LAUNCH("adam step " + std::to_string(adam_t));
    }
    result.run.steps.push_back(rec);
    if (step == 0 && cfg.steps > 1) {
      TCB_CUDA(cudaStreamSynchronize(stream));
      start = std::chrono::steady_clock::now();
    }
    if ((result.run.stopped = tn::unusable_scale_reason(scaler.scale(), step + 1))) break;
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

cudaDataType_t storage_type(tn::TrainingMode mode) {
  switch (tn::storage_of(mode)) {
    case tn::Storage::fp16:
      return CUDA_R_16F;
    case tn::Storage::bf16:
      return CUDA_R_16BF;
    case tn::Storage::fp32:
      break;
  }
  return CUDA_R_32F;
}

}  // namespace

std::optional<std::string> training_unsupported_reason(int cc_major, int cc_minor,
                                                       const numerics::TrainingConfig& cfg,
                                                       numerics::TrainingMode mode) {
  const cudaDataType_t type = storage_type(mode);
  // The forward GEMM has the mode's input and output types; the others differ only in D (FP32).
  return training_gemm(cfg.hidden, cfg.batch, cfg.inputs, type, type, false, false)
      .why_invalid(cc_major, cc_minor);
}

GpuTrainingResult train_on_gpu(const LtHandle& lt, int cc_major, int cc_minor,
                               const numerics::TrainingConfig& cfg, numerics::TrainingMode mode,
                               cudaStream_t stream) {
  switch (numerics::storage_of(mode)) {
    case numerics::Storage::fp32:
      return train<float>(lt, cc_major, cc_minor, cfg, mode, stream);
    case numerics::Storage::fp16:
      return train<__half>(lt, cc_major, cc_minor, cfg, mode, stream);
    case numerics::Storage::bf16:
      return train<__nv_bfloat16>(lt, cc_major, cc_minor, cfg, mode, stream);
  }
  throw InvalidArgument("train_on_gpu: unknown training mode");
}

}  // namespace tcbench::kernels
