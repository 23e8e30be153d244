// The element-wise kernels of one mixed-precision training step (the GPU side of
// tcbench/numerics/training_math.hpp): thin loops around the TCB_HD element functions the host
// trainer runs, so the GPU trainer (common/gpu_studies/src/gpu_training.cpp) computes the host's
// bits. T is the step's storage type: float, __half or __nv_bfloat16.
//
// The counting kernels add what storing lost into one DeviceTally (zero it before a step); every
// gradient written in T is also tallied (stored, flushed to zero, non-finite).
#pragma once

#include "tcbench/numerics/training_math.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstddef>

namespace tcbench::kernels {

// What one step's kernels accumulate; the host reads it once per step.
struct DeviceTally {
  unsigned long long stored, flushed, non_finite;
  double loss_sum;
  float found_inf;  // written by the check-and-unscale kernel (kernels/loss_scaling.hpp)
};

// ws[i] = T(w[i]): the FP32 master weights cast for this step.
template <typename T>
void cast_weights(const float* w, T* ws, std::size_t n, cudaStream_t stream);
// h = T(tanh(z)).
template <typename T>
void tanh_forward(const T* z, T* h, std::size_t n, cudaStream_t stream);
// dy = T(coef (y - t)) (coef = scaled_mse_coef), the loss sum (y - t)^2 into the tally.
template <typename T>
void loss_gradient(const T* y, const float* t, T* dy, std::size_t n, float coef, DeviceTally* tally,
                   cudaStream_t stream);
// g = T(g) in place: a weight gradient the GEMM wrote in FP32, rounded as a T-output GEMM would.
template <typename T>
void store_weight_gradient(float* g, std::size_t n, DeviceTally* tally, cudaStream_t stream);
// dz = T(tanh'(T(dh), h)).
template <typename T>
void tanh_backward(const float* dh, const T* h, T* dz, std::size_t n, DeviceTally* tally,
                   cudaStream_t stream);
// One Adam step on the FP32 masters (numerics::adam_update per element).
void adam(float* p, float* m, float* v, const float* g, std::size_t n,
          const numerics::AdamConstants& c, cudaStream_t stream);

}  // namespace tcbench::kernels
