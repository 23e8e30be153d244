// Loss-scaling kernels: classify-and-count of scaled gradients, and the fused multi-tensor
// check-and-unscale (PyTorch: aten/src/ATen/native/cuda/AmpKernels.cu,
// _amp_foreach_non_finite_check_and_unscale_cuda_, over multi_tensor_apply's chunk lists).
//
// Both bodies are the host-tested element functions of tcbench/numerics/loss_scaling.hpp. The
// unscale kernel is memory bound (one read and one write of every gradient): it reads and writes
// float4 (128-bit LDG/STG; the SASS test checks for LDG.E.128 on every architecture) and
// accumulates the Inf/NaN flag in a register, writing *found_inf at most once per thread.
#include "tcbench/numerics/host_device.hpp"
#include "tcbench/error.hpp"
#include "tcbench/kernels/loss_scaling.hpp"

#include <algorithm>
#include <string>

namespace tcbench::kernels {
namespace {

namespace tn = tcbench::numerics;

constexpr int kCountThreads = 256;
constexpr int kCountSlots = kMaxLandingScales * 2 * tn::kLandingCount;

struct ScaleList {
  float scale[kMaxLandingScales];
  int count;
};

__global__ void __launch_bounds__(kCountThreads)
    count_landings_kernel(const float* __restrict__ grads, std::size_t n, ScaleList scales,
                          unsigned long long* __restrict__ counts) {
  __shared__ unsigned int hist[kCountSlots];
  for (int i = threadIdx.x; i < kCountSlots; i += blockDim.x) hist[i] = 0;
  __syncthreads();
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n;
       i += stride) {
    const float g = grads[i];
    for (int s = 0; s < scales.count; ++s) {
      const int fp16 =
          static_cast<int>(tn::landing_after_scaling(g, scales.scale[s], tn::Format::fp16));
      const int bf16 =
          static_cast<int>(tn::landing_after_scaling(g, scales.scale[s], tn::Format::bf16));
      atomicAdd(&hist[(s * 2 + 0) * tn::kLandingCount + fp16], 1u);
      atomicAdd(&hist[(s * 2 + 1) * tn::kLandingCount + bf16], 1u);
    }
  }
  __syncthreads();
  // The launcher keeps a block's share of n below 2^32, so the 32-bit shared counters cannot wrap.
  for (int i = threadIdx.x; i < scales.count * 2 * tn::kLandingCount; i += blockDim.x)
    if (hist[i] != 0) atomicAdd(&counts[i], static_cast<unsigned long long>(hist[i]));
}

constexpr int kUnscaleThreads = 256;

__device__ inline void unscale4(float4& g, float inv_scale, bool& found) {
  g.x = tn::check_and_unscale(g.x, inv_scale, found);
  g.y = tn::check_and_unscale(g.y, inv_scale, found);
  g.z = tn::check_and_unscale(g.z, inv_scale, found);
  g.w = tn::check_and_unscale(g.w, inv_scale, found);
}

__global__ void __launch_bounds__(kUnscaleThreads)
    multi_tensor_check_and_unscale_kernel(const MultiTensorUnscale::Chunk* __restrict__ chunks,
                                          std::size_t chunk_count,
                                          const float* __restrict__ inv_scale_ptr,
                                          float* __restrict__ found_inf) {
  const float inv_scale = *inv_scale_ptr;
  bool found = false;
  for (std::size_t c = blockIdx.x; c < chunk_count; c += gridDim.x) {
    const MultiTensorUnscale::Chunk chunk = chunks[c];
    std::uint32_t scalar_from = 0;
    if (chunk.vector) {
      float4* v = reinterpret_cast<float4*>(chunk.data);
      const std::uint32_t n4 = chunk.count / 4, stride = blockDim.x;
      std::uint32_t i = threadIdx.x;
      // Four independent 128-bit loads in flight per thread before any store (PyTorch's
      // multi_tensor_apply uses the same ILP of 4): latency hidden without more threads.
      for (; i + 3 * stride < n4; i += 4 * stride) {
        float4 g[4] = {v[i], v[i + stride], v[i + 2 * stride], v[i + 3 * stride]};
#pragma unroll
        for (int u = 0; u < 4; ++u) unscale4(g[u], inv_scale, found);
#pragma unroll
        for (int u = 0; u < 4; ++u) v[i + u * stride] = g[u];
      }
      for (; i < n4; i += stride) {
        float4 g = v[i];
        unscale4(g, inv_scale, found);
        v[i] = g;
      }
      scalar_from = n4 * 4;
    }
    for (std::uint32_t i = scalar_from + threadIdx.x; i < chunk.count; i += blockDim.x)
      chunk.data[i] = tn::check_and_unscale(chunk.data[i], inv_scale, found);
  }
  // Every writer stores the same value, so the race is benign (PyTorch does the same).
  if (found) *found_inf = 1.0f;
}

}  // namespace

void count_landings(const float* grads, std::size_t n, std::span<const float> scales,
                    unsigned long long* counts, cudaStream_t stream) {
  if (scales.empty() || scales.size() > static_cast<std::size_t>(kMaxLandingScales))
    throw InvalidArgument("count_landings takes 1 to " + std::to_string(kMaxLandingScales) +
                          " scales, got " + std::to_string(scales.size()));
  ScaleList list{};
  list.count = static_cast<int>(scales.size());
  for (std::size_t i = 0; i < scales.size(); ++i) list.scale[i] = scales[i];
  const std::size_t slots = scales.size() * 2 * numerics::kLandingCount;
  TCB_CUDA(cudaMemsetAsync(counts, 0, slots * sizeof(unsigned long long), stream));
  if (n == 0) return;
  // Enough blocks to fill any GPU; each block's shared counters stay far below 2^32.
  const std::size_t per_block_cap = std::size_t{1} << 30;
  std::size_t blocks = std::min<std::size_t>(numerics::ceil_div(n, kCountThreads), 4096);
  blocks = std::max(blocks, numerics::ceil_div(n, per_block_cap));
  count_landings_kernel<<<static_cast<unsigned>(blocks), kCountThreads, 0, stream>>>(grads, n, list,
                                                                                     counts);
  TCB_CUDA_LAUNCH("count_landings over " + std::to_string(n) + " gradients, " +
                  std::to_string(scales.size()) + " scales");
}

MultiTensorUnscale::MultiTensorUnscale(std::span<const GradTensor> tensors) {
  std::vector<Chunk> table;
  for (const GradTensor& t : tensors) {
    for (std::size_t start = 0; start < t.count; start += kChunk) {
      float* p = t.data + start;
      const auto count = static_cast<std::uint32_t>(std::min(kChunk, t.count - start));
      table.push_back(Chunk{p, count, reinterpret_cast<std::uintptr_t>(p) % 16 == 0 ? 1u : 0u});
    }
    elements_ += t.count;
  }
  chunk_count_ = table.size();
  chunks_ = DeviceBuffer<Chunk>(table.size());
  if (!table.empty()) chunks_.upload(table);
}

void MultiTensorUnscale::run(const float* inv_scale, float* found_inf, cudaStream_t stream) const {
  if (chunk_count_ == 0) return;
  // One block per chunk up to a grid that fills any GPU several times; blocks then stride.
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>(chunk_count_, 65535));
  multi_tensor_check_and_unscale_kernel<<<blocks, kUnscaleThreads, 0, stream>>>(
      chunks_.get(), chunk_count_, inv_scale, found_inf);
  TCB_CUDA_LAUNCH("multi_tensor_check_and_unscale over " + std::to_string(elements_) +
                  " elements in " + std::to_string(chunk_count_) + " chunks");
}

bool check_and_unscale_host(std::span<const std::span<float>> tensors, float inv_scale) {
  bool found = false;
  for (std::span<float> t : tensors)
    for (float& g : t) g = numerics::check_and_unscale(g, inv_scale, found);
  return found;
}

}  // namespace tcbench::kernels
