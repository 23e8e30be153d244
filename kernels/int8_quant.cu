// Calibration and quantization kernels: grid-stride loops around the numerics element functions
// (llm.c style: the CPU reference is the header code itself, tested in tests/host/numerics).
#include "tcbench/numerics/host_device.hpp"
#include "tcbench/error.hpp"
#include "tcbench/kernels/int8_quant.hpp"
#include "tcbench/numerics/formats.hpp"
#include "tcbench/numerics/quantization.hpp"

#include <algorithm>
#include <string>

namespace tcbench::kernels {
namespace {

namespace tn = tcbench::numerics;

constexpr int kThreads = 256;

// Enough blocks to fill any GPU tcbench supports several times over; the loops stride the rest.
unsigned grid_for(std::size_t n) {
  const std::size_t blocks = numerics::ceil_div(n, kThreads);
  return static_cast<unsigned>(std::max<std::size_t>(1, std::min<std::size_t>(blocks, 4096)));
}

// Non-negative floats (and NaN with its sign cleared) order like their bit patterns, so an
// unsigned atomicMax on the bits is a float max, and NaN (above +inf) stays sticky.
__device__ unsigned abs_bits(float a) {
  return __float_as_uint(a) & 0x7fffffffu;
}

__device__ float warp_amax(float v) {
  for (int off = 16; off > 0; off /= 2) v = tn::amax_step(v, __shfl_xor_sync(0xffffffffu, v, off));
  return v;
}

__global__ void int8_abs_histogram_kernel(const float* __restrict__ x, std::size_t n,
                                          float range_max, int num_bins, tn::HistCount* counts,
                                          tn::HistCount* non_finite, unsigned* max_seen_bits) {
  // One privatized histogram per block in 32-bit counters: shared-memory 32-bit atomics are
  // native (ATOMS.ADD), 64-bit ones become compare-and-swap loops. The launcher keeps each
  // block's share of n below 2^32.
  extern __shared__ unsigned local[];
  for (int b = threadIdx.x; b < num_bins; b += blockDim.x) local[b] = 0;
  __syncthreads();
  float seen = 0.0f;
  tn::HistCount bad = 0;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const int bin = tn::abs_histogram_bin(x[i], range_max, num_bins);
    if (bin < 0) {
      ++bad;
      continue;
    }
    atomicAdd(&local[bin], 1u);
    seen = fmaxf(seen, fabsf(x[i]));
  }
  __syncthreads();
  for (int b = threadIdx.x; b < num_bins; b += blockDim.x)
    if (local[b]) atomicAdd(&counts[b], tn::HistCount{local[b]});
  if (bad) atomicAdd(non_finite, bad);
  seen = warp_amax(seen);
  if (threadIdx.x % 32 == 0) atomicMax(max_seen_bits, abs_bits(seen));
}

__global__ void int8_amax_kernel(const float* __restrict__ x, std::size_t n, unsigned* amax_bits) {
  float acc = 0.0f;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    acc = tn::amax_step(acc, x[i]);
  acc = warp_amax(acc);
  if (threadIdx.x % 32 == 0) atomicMax(amax_bits, abs_bits(acc));
}

__global__ void int8_quantize_per_tensor_kernel(const float* __restrict__ x, std::size_t n,
                                                float scale, std::int8_t* __restrict__ q) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    q[i] = tn::quantize_int8(x[i], scale);
}

__global__ void int8_quantize_per_channel_kernel(const float* __restrict__ w, std::size_t rows,
                                                 std::size_t cols, const float* __restrict__ scales,
                                                 std::int8_t* __restrict__ q) {
  const std::size_t n = rows * cols;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    q[i] = tn::quantize_int8(w[i], scales[i / cols]);
}

__global__ void int8_dequantize_kernel(const std::int8_t* __restrict__ q, std::size_t n,
                                       float scale, float* __restrict__ x) {
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<std::size_t>(gridDim.x) * blockDim.x)
    x[i] = tn::dequantize_int8(q[i], scale);
}

__global__ void int8_dequantize_accumulators_kernel(const std::int32_t* __restrict__ acc,
                                                    std::int64_t m, std::int64_t n, std::int64_t ld,
                                                    float scale_x,
                                                    const float* __restrict__ scale_w,
                                                    float* __restrict__ y) {
  const std::size_t total = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  for (std::size_t e = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; e < total;
       e += static_cast<std::size_t>(gridDim.x) * blockDim.x) {
    const std::int64_t i = static_cast<std::int64_t>(e % static_cast<std::size_t>(m));
    const std::int64_t j = static_cast<std::int64_t>(e / static_cast<std::size_t>(m));
    y[i + j * ld] = tn::dequantize_accumulator(acc[i + j * ld], scale_x, scale_w[i]);
  }
}

}  // namespace

void abs_histogram(const float* x, std::size_t n, float range_max, int num_bins,
                   numerics::HistCount* counts, numerics::HistCount* non_finite,
                   unsigned* max_seen_bits, cudaStream_t stream) {
  if (num_bins < 1 || num_bins > 4096 || !(range_max > 0.0f) || !tn::is_finite(range_max))
    throw InvalidArgument("abs_histogram: need 1..4096 bins and a positive finite range, got " +
                          std::to_string(num_bins) + " bins over " + std::to_string(range_max));
  if (n / grid_for(n) >= 0xffffffffull)
    throw InvalidArgument("abs_histogram: " + std::to_string(n) +
                          " values overflow the per-block 32-bit counters; split the call");
  const std::size_t shared = sizeof(unsigned) * static_cast<std::size_t>(num_bins);
  int8_abs_histogram_kernel<<<grid_for(n), kThreads, shared, stream>>>(
      x, n, range_max, num_bins, counts, non_finite, max_seen_bits);
  TCB_CUDA_LAUNCH("abs_histogram n=" + std::to_string(n) + " bins=" + std::to_string(num_bins));
}

void amax(const float* x, std::size_t n, unsigned* amax_bits, cudaStream_t stream) {
  int8_amax_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, n, amax_bits);
  TCB_CUDA_LAUNCH("amax n=" + std::to_string(n));
}

void quantize_per_tensor(const float* x, std::size_t n, float scale, std::int8_t* q,
                         cudaStream_t stream) {
  int8_quantize_per_tensor_kernel<<<grid_for(n), kThreads, 0, stream>>>(x, n, scale, q);
  TCB_CUDA_LAUNCH("quantize_per_tensor n=" + std::to_string(n));
}

void quantize_per_channel(const float* w, std::size_t rows, std::size_t cols, const float* scales,
                          std::int8_t* q, cudaStream_t stream) {
  if (cols == 0) throw InvalidArgument("quantize_per_channel: zero columns");
  int8_quantize_per_channel_kernel<<<grid_for(rows * cols), kThreads, 0, stream>>>(w, rows, cols,
                                                                                   scales, q);
  TCB_CUDA_LAUNCH("quantize_per_channel rows=" + std::to_string(rows) +
                  " cols=" + std::to_string(cols));
}

void dequantize(const std::int8_t* q, std::size_t n, float scale, float* x, cudaStream_t stream) {
  int8_dequantize_kernel<<<grid_for(n), kThreads, 0, stream>>>(q, n, scale, x);
  TCB_CUDA_LAUNCH("dequantize n=" + std::to_string(n));
}

void dequantize_accumulators(const std::int32_t* acc, std::int64_t m, std::int64_t n,
                             std::int64_t ld, float scale_x, const float* scale_w, float* y,
                             cudaStream_t stream) {
  if (m < 1 || n < 1 || ld < m)
    throw InvalidArgument("dequantize_accumulators: bad shape m=" + std::to_string(m) +
                          " n=" + std::to_string(n) + " ld=" + std::to_string(ld));
  const auto total = static_cast<std::size_t>(m) * static_cast<std::size_t>(n);
  int8_dequantize_accumulators_kernel<<<grid_for(total), kThreads, 0, stream>>>(
      acc, m, n, ld, scale_x, scale_w, y);
  TCB_CUDA_LAUNCH("dequantize_accumulators m=" + std::to_string(m) + " n=" + std::to_string(n));
}

}  // namespace tcbench::kernels
