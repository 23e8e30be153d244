// The element-wise kernels of a mixed-precision training step (training_step.hpp): each is a
// grid-stride loop around a TCB_HD function of tcbench/numerics/training_math.hpp.
#include "tcbench/numerics/host_device.hpp"
#include "tcbench/error.hpp"
#include "tcbench/kernels/training_step.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <string>
#include <type_traits>

namespace tcbench::kernels {
namespace {

namespace tn = tcbench::numerics;

// The storage format of T (its name in launch errors is the element table's).
template <typename T>
struct StorageTraits;
template <>
struct StorageTraits<float> {
  static constexpr tn::Storage storage = tn::Storage::fp32;
};
template <>
struct StorageTraits<__half> {
  static constexpr tn::Storage storage = tn::Storage::fp16;
};
template <>
struct StorageTraits<__nv_bfloat16> {
  static constexpr tn::Storage storage = tn::Storage::bf16;
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
  TCB_GRID_STRIDE(i, n) ws[i] = as_storage<T>(tn::store_as(w[i], StorageTraits<T>::storage));
}

template <typename T>
__global__ void __launch_bounds__(kThreads)
    tanh_forward_kernel(const T* __restrict__ z, T* __restrict__ h, std::size_t n) {
  TCB_GRID_STRIDE(i, n) {
    h[i] = as_storage<T>(tn::store_as(tn::tanh_forward(to_float(z[i])), StorageTraits<T>::storage));
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
    const float s = tn::store_as(g, StorageTraits<T>::storage);
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
    const float s = tn::store_as(g[i], StorageTraits<T>::storage);
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
    const float dh = tn::store_as(dh_fp32[i], StorageTraits<T>::storage);
    o.add(tn::store_outcome(dh_fp32[i], dh));
    const float d = tn::tanh_backward(dh, to_float(h[i]));
    const float s = tn::store_as(d, StorageTraits<T>::storage);
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
  return static_cast<unsigned>(std::min<std::size_t>(tn::ceil_div(n, kThreads), 1024));
}

template <typename T>
void check_launch(const char* what, std::size_t n) {
  TCB_CUDA_LAUNCH(std::string(what) + "<" + std::string(tn::name(StorageTraits<T>::storage)) +
                  "> n=" + std::to_string(n));
}

}  // namespace

template <typename T>
void cast_weights(const float* w, T* ws, std::size_t n, cudaStream_t stream) {
  cast_weights_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(w, ws, n);
  check_launch<T>("cast_weights", n);
}
template <typename T>
void tanh_forward(const T* z, T* h, std::size_t n, cudaStream_t stream) {
  tanh_forward_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(z, h, n);
  check_launch<T>("tanh_forward", n);
}
template <typename T>
void loss_gradient(const T* y, const float* t, T* dy, std::size_t n, float coef, DeviceTally* tally,
                   cudaStream_t stream) {
  loss_gradient_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(y, t, dy, n, coef, tally);
  check_launch<T>("loss_gradient", n);
}
template <typename T>
void store_weight_gradient(float* g, std::size_t n, DeviceTally* tally, cudaStream_t stream) {
  store_weight_gradient_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(g, n, tally);
  check_launch<T>("store_weight_gradient", n);
}
template <typename T>
void tanh_backward(const float* dh, const T* h, T* dz, std::size_t n, DeviceTally* tally,
                   cudaStream_t stream) {
  tanh_backward_kernel<T><<<blocks_for(n), kThreads, 0, stream>>>(dh, h, dz, n, tally);
  check_launch<T>("tanh_backward", n);
}
void adam(float* p, float* m, float* v, const float* g, std::size_t n,
          const numerics::AdamConstants& c, cudaStream_t stream) {
  adam_kernel<<<blocks_for(n), kThreads, 0, stream>>>(p, m, v, g, n, c);
  TCB_CUDA_LAUNCH("adam n=" + std::to_string(n));
}

#define TCB_TRAINING_STEP_TYPE_(T)                                                             \
  template void cast_weights<T>(const float*, T*, std::size_t, cudaStream_t);                  \
  template void tanh_forward<T>(const T*, T*, std::size_t, cudaStream_t);                      \
  template void loss_gradient<T>(const T*, const float*, T*, std::size_t, float, DeviceTally*, \
                                 cudaStream_t);                                                \
  template void store_weight_gradient<T>(float*, std::size_t, DeviceTally*, cudaStream_t);     \
  template void tanh_backward<T>(const float*, const T*, T*, std::size_t, DeviceTally*,        \
                                 cudaStream_t);
TCB_TRAINING_STEP_TYPE_(float)
TCB_TRAINING_STEP_TYPE_(__half)
TCB_TRAINING_STEP_TYPE_(__nv_bfloat16)
#undef TCB_TRAINING_STEP_TYPE_

}  // namespace tcbench::kernels
